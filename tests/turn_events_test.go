package tests

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// End-to-end tests of raw artifact parts (TURN-7), one messageId per
// message (RPC-16, TURN-6a) and InvalidAgentResponseError (A2A 1.0 §3.3,
// TURN-8, Appendix A) over the built binary, with the exec backend running
// tests/testdata/turn_events_agent.sh.

func teGateway(t *testing.T) *harness.Gateway {
	t.Helper()
	return harness.StartGateway(t, bkExecSite("turn-events", "turn_events_agent.sh", "per_turn", "inline_artifact_bytes 64", ""))
}

// teBytes are the bytes turn_events_agent.sh emits: 0, 1, …, 255, 0, …
func teBytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 256)
	}
	return b
}

// teArtifact returns the artifact of the stream's artifact update with id.
func teArtifact(t *testing.T, events []map[string]any, id string) map[string]any {
	t.Helper()
	for _, ev := range events {
		if a, ok := bkGet(ev, "artifactUpdate", "artifact").(map[string]any); ok && bkStr(a, "artifactId") == id {
			return a
		}
	}
	t.Fatalf("no artifact update for %s in %v", id, events)
	return nil
}

// TURN-7: a raw part up to inline_artifact_bytes reaches the client inline
// (in the artifact update and in GetTask); a larger one becomes a url part
// whose download returns the exact bytes to the owner only.
func TestTurnEventsRawArtifactParts(t *testing.T) {
	t.Parallel()
	gw := teGateway(t)

	// Small: inline, both streamed and stored.
	events := harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("raw-small", "", nil)}).Rest(30 * time.Second)
	if state, _ := bkFinalText(events); state != "TASK_STATE_COMPLETED" {
		t.Fatalf("raw-small turn ended %s: %v", state, events)
	}
	taskID := bkStr(events[0], "task", "id")
	wantSmall := base64.StdEncoding.EncodeToString(teBytes(16))
	a := teArtifact(t, events, "small")
	if bkStr(a, "parts", 0, "raw") != wantSmall || bkStr(a, "parts", 0, "filename") != "small.bin" || bkGet(a, "parts", 0, "url") != nil {
		t.Errorf("streamed small artifact = %v", a)
	}
	task, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "GetTask", map[string]any{"id": taskID})
	if rpcErr != nil || bkStr(task, "artifacts", 0, "parts", 0, "raw") != wantSmall {
		t.Errorf("GetTask small artifact: %v %v", rpcErr, bkGet(task, "artifacts"))
	}

	// Large (300 bytes > 64): stored, a url part with the payload metadata.
	events = harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("raw-large", "", nil)}).Rest(30 * time.Second)
	if state, _ := bkFinalText(events); state != "TASK_STATE_COMPLETED" {
		t.Fatalf("raw-large turn ended %s: %v", state, events)
	}
	taskID = bkStr(events[0], "task", "id")
	want := teBytes(300)
	sum := sha256.Sum256(want)
	a = teArtifact(t, events, "large")
	link := bkStr(a, "parts", 0, "url")
	if link != gw.URL+"/artifacts/"+taskID+"/large" || bkGet(a, "parts", 0, "raw") != nil || bkStr(a, "parts", 0, "mediaType") != "image/png" || bkStr(a, "parts", 0, "filename") != "large.png" {
		t.Fatalf("streamed large artifact = %v", a)
	}
	md, _ := bkGet(a, "metadata", "iac_code").(map[string]any)
	if md["mediaType"] != "image/png" || md["byteSize"] != float64(300) || md["sha256"] != hex.EncodeToString(sum[:]) {
		t.Errorf("large artifact metadata = %v", md)
	}
	if b, _ := json.Marshal(events); strings.Contains(string(b), base64.StdEncoding.EncodeToString(want)[:80]) {
		t.Error("the stored bytes are repeated in the stream")
	}
	task, rpcErr = harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "GetTask", map[string]any{"id": taskID})
	if rpcErr != nil || bkStr(task, "artifacts", 0, "parts", 0, "url") != link {
		t.Errorf("GetTask large artifact: %v %v", rpcErr, bkGet(task, "artifacts"))
	}
	get := func(token string) (int, []byte, http.Header) {
		resp, b := do(t, "GET", link, map[string]string{"Authorization": "Bearer " + token})
		return resp.StatusCode, b, resp.Header
	}
	if code, body, hdr := get("tok-alice"); code != 200 || string(body) != string(want) || hdr.Get("Content-Type") != "image/png" {
		t.Errorf("owner download = %d %q, %d bytes", code, hdr.Get("Content-Type"), len(body))
	}
	if code, body, _ := get("tok-bob"); code != 404 || len(body) >= 300 {
		t.Errorf("other principal download = %d", code)
	}
}

// RPC-16, TURN-6a: every message a streamed 4-chunk echo turn emits has
// its own messageId, also across tasks; the stored history keeps the user
// message and the final assistant message.
func TestTurnEventsMessageIDs(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `a2a {
	card {
		name echo-ids
	}
	backend echo {
		chunks 4
	}
}`)
	seen := map[string]bool{}
	for turn := 0; turn < 2; turn++ {
		events := harness.At(gw.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("one two three four five six", "", nil)}).Rest(30 * time.Second)
		taskID := bkStr(events[0], "task", "id")
		chunks, messages := 0, 0
		final := ""
		for _, ev := range events {
			id := bkStr(ev, "statusUpdate", "status", "message", "messageId")
			if bkGet(ev, "statusUpdate", "status", "message") == nil {
				continue
			}
			messages++
			if id == "" || seen[id] {
				t.Errorf("turn %d: status message id %q missing or repeated: %v", turn, id, ev)
			}
			seen[id] = true
			if bkState(ev) == "TASK_STATE_WORKING" && bkGet(ev, "statusUpdate", "metadata") == nil {
				chunks++
			}
			final = id
		}
		if chunks != 4 || messages != 6 {
			t.Errorf("turn %d: %d chunk messages of %d, want 4 of 6 (chunks, whole answer, final)", turn, chunks, messages)
		}
		task, rpcErr := harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"id": taskID})
		hist, _ := bkGet(task, "history").([]any)
		if rpcErr != nil || len(hist) != 2 || bkStr(hist[0], "role") != "ROLE_USER" || bkStr(hist[1], "messageId") != final || bkStr(hist[1], "parts", 0, "text") != "Echo: one two three four five six" {
			t.Errorf("turn %d: stored history = %v %v", turn, rpcErr, hist)
		}
	}
}

// A2A 1.0 §3.3, TURN-8, Appendix A: backend output that breaks the
// turn-event protocol answers a blocking SendMessage with
// InvalidAgentResponseError (-32006) and no backend text; the task (named
// in the error) is stored FAILED; a stream that already delivered the
// task ends it FAILED with the same sanitised message.
func TestTurnEventsInvalidAgentResponse(t *testing.T) {
	t.Parallel()
	gw := teGateway(t)
	for _, prompt := range []string{"not-json", "bad-part"} {
		res, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "SendMessage", map[string]any{"message": bkMessage(prompt, "", nil)})
		if rpcErr == nil || rpcErr["code"] != float64(-32006) {
			t.Fatalf("%s: SendMessage = %v %v, want error -32006", prompt, res, rpcErr)
		}
		b, _ := json.Marshal(rpcErr)
		if strings.Contains(string(b), "secret") || strings.Contains(string(b), "Traceback") || !strings.Contains(bkStr(rpcErr, "message"), "correlation id") {
			t.Errorf("%s: error leaks or lacks the correlation id: %s", prompt, b)
		}
		info, _ := bkGet(rpcErr, "data", 0).(map[string]any)
		if info["reason"] != "INVALID_AGENT_RESPONSE" || info["domain"] != "a2a-protocol.org" {
			t.Errorf("%s: ErrorInfo = %v", prompt, info)
		}
		taskID := bkStr(info, "metadata", "taskId")
		task, getErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "GetTask", map[string]any{"id": taskID})
		if getErr != nil || bkStr(task, "status", "state") != "TASK_STATE_FAILED" || bkStr(task, "status", "message", "parts", 0, "text") != bkStr(rpcErr, "message") {
			t.Errorf("%s: stored task %v %v", prompt, getErr, task)
		}
		if b, _ := json.Marshal(task); strings.Contains(string(b), "secret") {
			t.Errorf("%s: the stored task leaks backend output: %s", prompt, b)
		}
		if _, bobErr := harness.At(gw.URL, harness.Bearer("tok-bob")).RPC(t, "GetTask", map[string]any{"id": taskID}); bobErr == nil || bobErr["code"] != float64(-32001) {
			t.Errorf("%s: another principal sees the task: %v", prompt, bobErr)
		}
	}
	events := harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("not-json", "", nil)}).Rest(30 * time.Second)
	state, text := bkFinalText(events)
	if bkGet(events[0], "task") == nil || state != "TASK_STATE_FAILED" || !strings.HasPrefix(text, "The agent returned an invalid response (correlation id ") {
		t.Errorf("streamed invalid output ended %s %q", state, text)
	}
	for _, ev := range events {
		if ev["error"] != nil || strings.Contains(fmt.Sprint(ev), "secret") {
			t.Errorf("stream event carries an error or backend output: %v", ev)
		}
	}
	if out := gw.Output(); strings.Contains(out, "secret-backend-output") {
		t.Errorf("the backend's output reached the log")
	}
}
