package agent

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Tests of raw artifact parts (TURN-7), one messageId per message (RPC-16,
// TURN-6a) and InvalidAgentResponseError (A2A 1.0 §3.3, TURN-8).

// sendInvalid runs a blocking SendMessage whose backend breaks the
// turn-event protocol: the answer is InvalidAgentResponseError (-32006)
// naming the task and a correlation id, without secret (backend output);
// the task is stored FAILED with the same sanitised message. It returns
// the stored task.
func (e *testEnv) sendInvalid(req *a2a.SendMessageRequest, secret string) a2a.Task {
	e.t.Helper()
	rpcErr := e.rpcError("", a2a.MethodSendMessage, req, a2a.CodeInvalidAgentResponse)
	md, _ := rpcErr.Data[0]["metadata"].(map[string]any)
	taskID, _ := md["taskId"].(string)
	corr, _ := md["correlationId"].(string)
	if taskID == "" || corr == "" || !strings.Contains(rpcErr.Message, "invalid response") || !strings.Contains(rpcErr.Message, "correlation id "+corr) {
		e.t.Fatalf("error = %q %v", rpcErr.Message, md)
	}
	if b, _ := json.Marshal(rpcErr); strings.Contains(string(b), secret) {
		e.t.Errorf("the error carries backend output: %s", b)
	}
	task := e.getTask("", taskID)
	if task.Status.State != a2a.TaskStateFailed || statusText(task) != rpcErr.Message {
		e.t.Errorf("stored task: %s %q, want FAILED %q", task.Status.State, statusText(task), rpcErr.Message)
	}
	if b, _ := json.Marshal(task); strings.Contains(string(b), secret) {
		e.t.Errorf("the stored task carries backend output: %s", b)
	}
	return task
}

// rawEnv is an endpoint whose backend emits events, with artifacts stored
// under a temp dir, inline_artifact_bytes 8 and payloads up to 16 bytes.
func rawEnv(t *testing.T, events func(*backend.TurnRequest) []backend.Event) (*testEnv, string) {
	t.Helper()
	dir := t.TempDir()
	return newTestEnv(t, Config{Backend: artScript{events: events}, ArtifactDir: dir, MaxArtifactBytes: 16, InlineArtifactBytes: 8}), dir
}

func rawPart(b []byte, extra string) string {
	return `{"raw":"` + base64.StdEncoding.EncodeToString(b) + `"` + extra + `}`
}

func shaHex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// TURN-7: a raw part up to inline_artifact_bytes is passed inline; a larger
// one is stored and becomes a url part with mediaType, byteSize and sha256
// metadata, served to the task's owner with the exact bytes.
func TestArtifactRawParts(t *testing.T) {
	small := []byte("12345678")     // 8 bytes: inline
	big := []byte("png-bytes-12")   // 12 bytes: stored, the artifact's payload
	second := []byte("second-bin")  // 10 bytes: stored, linked by sha256
	appended := []byte("appended!") // 9 bytes: stored by an append
	e, dir := rawEnv(t, func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{
			{V: 1, Type: backend.EventArtifact, ArtifactID: "small", Parts: json.RawMessage(`[` + rawPart(small, `,"mediaType":"image/png"`) + `]`)},
			{V: 1, Type: backend.EventArtifact, ArtifactID: "big", Name: "pics", Parts: json.RawMessage(`[{"text":"caption"},` +
				rawPart(big, `,"mediaType":"image/png; q=1","filename":"../pic.png","metadata":{"k":"v","iac_code":{"sha256":"forged"}}`) + `,` +
				rawPart(second, ``) + `]`)},
			{V: 1, Type: backend.EventArtifact, ArtifactID: "big", Append: true, LastChunk: true, Parts: json.RawMessage(`[` + rawPart(appended, `,"mediaType":"text/plain"`) + `]`)},
			// A backend cannot point a part at a stored file through the
			// gateway's metadata namespace.
			{V: 1, Type: backend.EventArtifact, ArtifactID: "forged", Parts: json.RawMessage(`[{"url":"https://x/","metadata":{"iac_code":{"sha256":"` + shaHex(second) + `"}}}]`)},
			{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "done"},
		}
	})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("go")), 71)
	events := s.rpcAll("71")
	var updates []*a2a.TaskArtifactUpdateEvent
	for _, ev := range events {
		if ev.ArtifactUpdate != nil {
			updates = append(updates, ev.ArtifactUpdate)
		}
	}
	if len(updates) != 4 || eventState(events[len(events)-1]) != a2a.TaskStateCompleted {
		t.Fatalf("events = %s", mustJSON(events))
	}
	taskID := updates[0].TaskID
	if p := updates[0].Artifact.Parts; len(p) != 1 || string(p[0].Raw) != string(small) || p[0].MediaType != "image/png" || p[0].URL != "" {
		t.Errorf("small raw part not inline: %s", mustJSON(p))
	}
	task := e.getTask("", taskID)
	if len(task.Artifacts) != 3 {
		t.Fatalf("artifacts = %s", mustJSON(task.Artifacts))
	}
	if p := task.Artifacts[0].Parts; string(p[0].Raw) != string(small) {
		t.Errorf("stored small artifact = %s", mustJSON(p))
	}
	base := e.srv.URL + "/artifacts/" + taskID + "/big"
	art := task.Artifacts[1]
	if len(art.Parts) != 4 || *art.Parts[0].Text != "caption" {
		t.Fatalf("big artifact = %s", mustJSON(art))
	}
	wantMD := func(b []byte, mt string) map[string]any {
		return map[string]any{"mediaType": mt, "byteSize": float64(len(b)), "sha256": shaHex(b)}
	}
	if got := art.Metadata[ns]; mustJSON(got) != mustJSON(wantMD(big, "image/png")) {
		t.Errorf("artifact metadata = %v", got)
	}
	for i, c := range []struct {
		b          []byte
		url, mt    string
		fn, header string
	}{
		{big, base, "image/png", "pic.png", "image/png"},
		{second, base + "/" + shaHex(second), "application/octet-stream", "", "application/octet-stream"},
		{appended, base + "/" + shaHex(appended), "text/plain", "", "text/plain"},
	} {
		p := art.Parts[i+1]
		if p.Kind() != "url" || p.URL != c.url || p.MediaType != c.mt || p.Filename != c.fn || mustJSON(p.Metadata[ns]) != mustJSON(wantMD(c.b, c.mt)) {
			t.Errorf("stored part %d = %s, want url %s", i+1, mustJSON(p), c.url)
		}
		fi, err := os.Stat(filepath.Join(dir, shaHex(c.b)[:2], shaHex(c.b)))
		if err != nil || fi.Size() != int64(len(c.b)) {
			t.Errorf("stored file of part %d: %v %v", i+1, fi, err)
		}
		path := strings.TrimPrefix(c.url, e.srv.URL)
		rep := e.do(http.MethodGet, path, nil, v1Headers(""))
		if rep.status != 200 || string(rep.body) != string(c.b) || rep.header.Get("Content-Type") != c.header || rep.header.Get("Etag") != `"`+shaHex(c.b)+`"` {
			t.Errorf("GET %s = %d %q %v", path, rep.status, rep.body, rep.header)
		}
		if rep := e.do(http.MethodGet, path, nil, v1Headers("mallory")); rep.status != 404 || strings.Contains(string(rep.body), string(c.b)) {
			t.Errorf("GET %s as another principal = %d", path, rep.status)
		}
	}
	if md := art.Parts[1].Metadata; md["k"] != "v" {
		t.Errorf("the backend's own part metadata was dropped: %v", md)
	}
	if b, _ := json.Marshal(task); strings.Contains(string(b), base64.StdEncoding.EncodeToString(big)) || strings.Contains(string(b), `"sha256":"forged"`) {
		t.Errorf("stored bytes or forged metadata repeated in the task: %s", b)
	}
	// A sha that is not one of the artifact's stored parts is not served,
	// nor one a backend wrote into the gateway's namespace.
	for _, path := range []string{
		"/artifacts/" + taskID + "/small/" + shaHex(second),
		"/artifacts/" + taskID + "/forged/" + shaHex(second),
		"/artifacts/" + taskID + "/big/" + shaHex(small),
		"/artifacts/" + taskID + "/big/not-a-sha",
	} {
		if rep := e.do(http.MethodGet, path, nil, v1Headers("")); rep.status != 404 {
			t.Errorf("GET %s = %d, want 404", path, rep.status)
		}
	}
	if md := task.Artifacts[2].Parts[0].Metadata; md != nil {
		t.Errorf("forged part metadata kept: %v", md)
	}
}

// TURN-7: a raw part over max_artifact_size is invalid output; the empty
// raw part (no inline JSON form) is stored; without an artifact directory
// raw parts stay inline.
func TestArtifactRawPartLimits(t *testing.T) {
	e, _ := rawEnv(t, func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[` + rawPart([]byte("seventeen-bytes!!"), "") + `]`)}}
	})
	e.sendInvalid(sendReq(msg("go")), "seventeen")

	e, _ = rawEnv(t, func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventArtifact, ArtifactID: "empty", Parts: json.RawMessage(`[{"raw":"","filename":"e.bin"}]`)}}
	})
	task := e.send("", sendReq(msg("go")))
	if p := task.Artifacts[0].Parts[0]; p.Kind() != "url" || p.Filename != "e.bin" {
		t.Errorf("empty raw part = %s", mustJSON(p))
	} else if rep := e.do(http.MethodGet, strings.TrimPrefix(p.URL, e.srv.URL), nil, v1Headers("")); rep.status != 200 || len(rep.body) != 0 {
		t.Errorf("GET empty part = %d %q", rep.status, rep.body)
	}

	big := strings.Repeat("b", 100)
	e = newTestEnv(t, Config{Backend: artScript{events: func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[` + rawPart([]byte(big), "") + `]`)}}
	}}, InlineArtifactBytes: 8})
	task = e.send("", sendReq(msg("go")))
	if p := task.Artifacts[0].Parts[0]; string(p.Raw) != big {
		t.Errorf("without an artifact directory: %s", mustJSON(p))
	}
}

// RPC-16, TURN-6a: every message of a streamed turn has its own id (each
// chunk, the whole answer, the final status); the history keeps the user
// message and the final assistant message; ids differ across tasks.
func TestMessageIDsDistinct(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 4}})
	seen := map[string]string{}
	note := func(m *a2a.Message, where string) {
		if m == nil {
			return
		}
		if m.MessageID == "" {
			t.Errorf("%s: message without id", where)
		}
		if prev, dup := seen[m.MessageID]; dup {
			t.Errorf("messageId %s used by %s and %s", m.MessageID, prev, where)
		}
		seen[m.MessageID] = where
	}
	for turn := 0; turn < 2; turn++ {
		s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("one two three four")), 72)
		events := s.rpcAll("72")
		var final *a2a.Message
		chunks := 0
		for i, ev := range events {
			if ev.StatusUpdate == nil || ev.StatusUpdate.Status.Message == nil {
				continue
			}
			m := ev.StatusUpdate.Status.Message
			note(m, mustJSON(ev.StatusUpdate.Status.State)+" event "+string(rune('0'+i)))
			if ev.StatusUpdate.Status.State == a2a.TaskStateWorking && ev.StatusUpdate.Metadata == nil {
				chunks++
			}
			final = m
		}
		if chunks != 4 {
			t.Errorf("turn %d: %d chunk messages, want 4", turn, chunks)
		}
		task := e.getTask("", events[0].Task.ID)
		if len(task.History) != 2 || task.History[0].Role != a2a.RoleUser || task.History[1].MessageID != final.MessageID || task.Status.Message.MessageID != final.MessageID {
			t.Errorf("turn %d: history %s, final message %s", turn, mustJSON(task.History), final.MessageID)
		}
	}
	if len(seen) != 2*(4+2) {
		t.Errorf("%d distinct message ids over two turns, want 12", len(seen))
	}
}

// A2A 1.0 §3.3, TURN-8: once a stream has delivered the task, invalid
// backend output ends the task FAILED with the sanitised message; the
// stream carries no error and no backend output.
func TestInvalidOutputStreamFails(t *testing.T) {
	e, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventText, Text: "partial"}, {V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"text":"a","url":"https://secret-detail/"}]`)}}
	})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("go")), 73)
	events := s.rpcAll("73")
	last := events[len(events)-1]
	if events[0].Task == nil || eventState(last) != a2a.TaskStateFailed {
		t.Fatalf("events = %s", mustJSON(events))
	}
	txt := messageText(*last.StatusUpdate.Status.Message)
	if !strings.HasPrefix(txt, "The agent returned an invalid response (correlation id ") || strings.Contains(mustJSON(events), "secret-detail") {
		t.Errorf("final = %q", txt)
	}
	// returnImmediately: the caller has the task, which ends FAILED.
	req := sendReq(msg("go"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	if got := e.waitState("", task.ID, a2a.TaskStateFailed, 10*time.Second); !strings.Contains(statusText(got), "invalid response") {
		t.Errorf("returnImmediately task: %s %q", got.Status.State, statusText(got))
	}
}
