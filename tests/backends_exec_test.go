package tests

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// End-to-end tests of the exec backend (TURN-1, TURN-3, TURN-6, TURN-6a,
// TURN-7, TURN-8, Appendix A) with the real binary running
// tests/testdata/exec_agent.sh.

func bkExecGateway(t *testing.T, mode, extra string) *harness.Gateway {
	t.Helper()
	return harness.StartGateway(t, bkExecSite("exec-agent", "exec_agent.sh", mode, "thinking_exposure tool_trace raw_thinking", "env FOO bar\n\t\t"+extra))
}

// bkExecSite is the a2a block of an exec agent named name running
// tests/testdata/script in mode (grace period 500ms), with the principals
// alice (tok-alice) and bob (tok-bob); siteExtra goes into the a2a block,
// backendExtra into the backend block.
func bkExecSite(name, script, mode, siteExtra, backendExtra string) string {
	return `a2a {
	card {
		name ` + name + `
	}
	auth {
		principal alice bearer tok-alice
		principal bob bearer tok-bob
	}
	` + siteExtra + `
	backend exec ` + filepath.Join(harness.RepoRoot(), "tests", "testdata", script) + ` {
		mode ` + mode + `
		grace_period 500ms
		` + backendExtra + `
	}
}`
}

// TURN-1, TURN-6, TURN-6a, TURN-7: every event type of the protocol
// reaches the client in order and the artifacts are stored and served.
func TestBackendsExecAllEvents(t *testing.T) {
	t.Parallel()
	gw := bkExecGateway(t, "per_turn", "")
	events := harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("all-events please", "", nil)}).Rest(30 * time.Second)
	if len(events) < 5 {
		t.Fatalf("too few events: %v", events)
	}
	if bkState(events[0]) != "TASK_STATE_SUBMITTED" || bkGet(events[0], "task") == nil {
		t.Fatalf("first event is not the SUBMITTED task: %v", events[0])
	}
	taskID := bkStr(events[0], "task", "id")
	toolStatuses := map[string]bool{}
	var chunks []string
	var thinking, permission, usage, final bool
	arts := map[string]map[string]any{}
	for _, ev := range events[1:] {
		if a, ok := bkGet(ev, "artifactUpdate", "artifact").(map[string]any); ok {
			arts[bkStr(a, "artifactId")] = a
			continue
		}
		md, _ := bkGet(ev, "statusUpdate", "metadata", "iac_code").(map[string]any)
		if tool, ok := md["tool"].(map[string]any); ok {
			toolStatuses[bkStr(tool, "status")] = true
			if bkStr(tool, "status") == "failed" {
				if b, _ := json.Marshal(tool); strings.Contains(string(b), "secret") {
					t.Errorf("tool failure leaks the backend's error: %s", b)
				}
			}
		}
		if md["thinking"] != nil {
			thinking = bkStr(md, "thinking", "type") == "raw_thinking" && bkStr(md, "thinking", "text") == "Planning the VPC."
		}
		if md["permission"] != nil {
			permission = bkGet(md, "permission", "autoApproved") == true && bkStr(md, "permission", "toolName") == "write_file"
		}
		if md["usage"] != nil {
			usage = bkGet(md, "usage", "totalTokens") == float64(17)
		}
		if bkGet(md, "assistantFinal", "complete") == true {
			final = bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text") == "Here is your VPC."
			continue
		}
		if txt := bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text"); txt != "" && bkState(ev) == "TASK_STATE_WORKING" {
			chunks = append(chunks, txt)
		}
	}
	for _, s := range []string{"started", "input_delta", "input_complete", "progress", "completed", "failed"} {
		if !toolStatuses[s] {
			t.Errorf("no tool event with status %s (got %v)", s, toolStatuses)
		}
	}
	if strings.Join(chunks, "|") != "Here is |your VPC." {
		t.Errorf("text chunks = %q", chunks)
	}
	if !thinking || !permission || !usage || !final {
		t.Errorf("thinking=%v permission=%v usage=%v assistantFinal=%v", thinking, permission, usage, final)
	}
	state, text := bkFinalText(events)
	if state != "TASK_STATE_INPUT_REQUIRED" || text != "Here is your VPC." {
		t.Errorf("final = %s %q", state, text)
	}
	// Inline parts pass through.
	if s := arts["summary"]; bkStr(s, "parts", 0, "text") != "2 vSwitches" || bkGet(s, "parts", 1, "data", "cidr") != "10.0.0.0/8" {
		t.Errorf("inline artifact = %v", s)
	}
	// Payloads become url parts with metadata, served to the owner only.
	tmpl := arts["template"]
	link := bkStr(tmpl, "parts", 0, "url")
	if link != gw.URL+"/artifacts/"+taskID+"/template" {
		t.Fatalf("template artifact url = %q", link)
	}
	md, _ := bkGet(tmpl, "metadata", "iac_code").(map[string]any)
	if md["mediaType"] != "application/yaml" || md["byteSize"] != float64(37) || len(bkStr(md, "sha256")) != 64 {
		t.Errorf("template artifact metadata = %v", md)
	}
	get := func(token, rng, inm string) (*http.Response, string) {
		r := harness.At(link).Do(t, "GET", "", harness.Header("A2A-Version", ""), harness.Bearer(token), harness.Header("Range", rng), harness.Header("If-None-Match", inm))
		return r.Response, string(r.Raw)
	}
	resp, body := get("tok-alice", "", "")
	if resp.StatusCode != 200 || body != "ROSTemplateFormatVersion: 2015-09-01\n" || resp.Header.Get("Content-Type") != "application/yaml" {
		t.Errorf("owner GET = %d %q %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	etag := resp.Header.Get("Etag")
	if etag != `"`+bkStr(md, "sha256")+`"` {
		t.Errorf("ETag = %q, want the quoted sha256", etag)
	}
	if resp, body := get("tok-alice", "bytes=0-7", ""); resp.StatusCode != 206 || body != "ROSTempl" {
		t.Errorf("range GET = %d %q", resp.StatusCode, body)
	}
	if resp, _ := get("tok-alice", "", etag); resp.StatusCode != 304 {
		t.Errorf("conditional GET = %d, want 304", resp.StatusCode)
	}
	if resp, body := get("tok-bob", "", ""); resp.StatusCode != 404 || strings.Contains(body, "ROS") {
		t.Errorf("other principal GET = %d %q, want 404", resp.StatusCode, body)
	}
	if resp, _ := get("", "", ""); resp.StatusCode != 401 {
		t.Errorf("anonymous GET = %d, want 401", resp.StatusCode)
	}
	// The stored task keeps the artifacts.
	task, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "GetTask", map[string]any{"id": taskID})
	if rpcErr != nil || len(bkGet(task, "artifacts").([]any)) != 3 {
		t.Errorf("stored task artifacts: %v %v", rpcErr, bkGet(task, "artifacts"))
	}
}

// Appendix A: a message event as the only content makes the blocking reply
// a direct Message.
func TestBackendsExecMessageReply(t *testing.T) {
	t.Parallel()
	gw := bkExecGateway(t, "per_turn", "")
	res, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "SendMessage", map[string]any{"message": bkMessage("message-reply", "", nil)})
	if rpcErr != nil {
		t.Fatalf("SendMessage: %v", rpcErr)
	}
	if res["task"] != nil || res["message"] == nil {
		t.Fatalf("reply is not a direct message: %v", res)
	}
	msg := res["message"].(map[string]any)
	if bkStr(msg, "role") != "ROLE_AGENT" || bkStr(msg, "parts", 0, "text") != "Direct answer." || bkGet(msg, "parts", 1, "data", "k") != float64(1) || bkStr(msg, "contextId") == "" {
		t.Errorf("direct message = %v", msg)
	}
	if msg["taskId"] != nil {
		t.Errorf("direct message names a task: %v", msg)
	}
}

// TURN-3: per_context keeps one process per context; cancel with an
// answered cancel line keeps it; TURN-8 crash and malformed output.
func TestBackendsExecPerContext(t *testing.T) {
	t.Parallel()
	gw := bkExecGateway(t, "per_context", "")
	ctxID := "bk-ctx-" + time.Now().Format("150405.000")
	send := func(text string) (string, string) {
		res, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "SendMessage", map[string]any{"message": bkMessage(text, ctxID, nil)})
		if rpcErr != nil {
			t.Fatalf("SendMessage %q: %v", text, rpcErr)
		}
		return bkStr(res, "task", "status", "state"), bkStr(res, "task", "status", "message", "parts", 0, "text")
	}
	_, first := send("count")
	_, second := send("count")
	if !strings.HasPrefix(first, "turn 1 pid ") || !strings.HasPrefix(second, "turn 2 pid ") || bkPID(t, first) != bkPID(t, second) {
		t.Fatalf("second turn did not reach the same process: %q then %q", first, second)
	}
	pid := bkPID(t, first)

	// Cancel answered by the process (end canceled): it survives.
	stream := harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("slow", ctxID, nil)})
	taskID := bkWaitWorking(t, stream)
	if _, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "CancelTask", map[string]any{"id": taskID}); rpcErr != nil {
		t.Fatalf("CancelTask: %v", rpcErr)
	}
	if state, _ := bkFinalText(stream.Rest(20 * time.Second)); state != "TASK_STATE_CANCELED" {
		t.Fatalf("canceled turn ended %s", state)
	}
	if _, third := send("count"); !strings.HasPrefix(third, "turn 4 pid ") || bkPID(t, third) != pid {
		t.Errorf("after an answered cancel the process changed: %q (pid was %d)", third, pid)
	}

	// A process that ignores the cancel line and SIGTERM is killed, group and all.
	stream = harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("stubborn", ctxID, nil)})
	taskID = bkWaitWorking(t, stream)
	if _, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "CancelTask", map[string]any{"id": taskID}); rpcErr != nil {
		t.Fatalf("CancelTask: %v", rpcErr)
	}
	if state, _ := bkFinalText(stream.Rest(20 * time.Second)); state != "TASK_STATE_CANCELED" {
		t.Fatalf("canceled turn ended %s", state)
	}
	bkGroupGone(t, pid, 5*time.Second)
	_, fresh := send("count")
	if !strings.HasPrefix(fresh, "turn 1 pid ") || bkPID(t, fresh) == pid {
		t.Errorf("after a killed process the next turn did not start a new one: %q", fresh)
	}
	pid = bkPID(t, fresh)

	// A crash fails the turn with a correlation id and no detail; the group is gone.
	state, text := send("crash")
	if state != "TASK_STATE_FAILED" || !strings.Contains(text, "correlation id") || strings.Contains(text, "secret") {
		t.Errorf("crash ended %s %q", state, text)
	}
	bkGroupGone(t, pid, 5*time.Second)
	if out := gw.Output(); !strings.Contains(out, "correlation_id") {
		t.Errorf("no correlation id in the log")
	}
	// Malformed output: a blocking send answers InvalidAgentResponseError
	// without the backend's output (A2A 1.0 §3.3).
	if _, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "SendMessage", map[string]any{"message": bkMessage("malformed", ctxID, nil)}); rpcErr == nil || rpcErr["code"] != float64(-32006) || !strings.Contains(bkStr(rpcErr, "message"), "correlation id") || strings.Contains(bkStr(rpcErr, "message"), "json") {
		t.Errorf("malformed output answered %v", rpcErr)
	}
}

// TURN-3: per_turn cancel and timeout terminate the process group; the
// environment is scrubbed and the cwd is the workspace.
func TestBackendsExecPerTurnCancelTimeout(t *testing.T) {
	t.Parallel()
	gw := bkExecGateway(t, "per_turn", "timeout 2s")
	res, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "SendMessage", map[string]any{"message": bkMessage("env-check", "", map[string]any{"iac_code": map[string]any{"cwd": gw.Dir}})})
	if rpcErr != nil {
		t.Fatal(rpcErr)
	}
	text := bkStr(res, "task", "status", "message", "parts", 0, "text")
	real, _ := filepath.EvalSymlinks(gw.Dir)
	if !strings.Contains(text, "cwd="+real+" ") {
		t.Errorf("cwd is not the workspace: %q", text)
	}
	envs := strings.Split(strings.TrimSuffix(text[strings.Index(text, "env=")+4:], ","), ",")
	for _, e := range envs {
		switch e {
		case "PATH", "HOME", "LANG", "TZ", "FOO", "PWD", "SHLVL", "_", "OLDPWD":
		default:
			t.Errorf("unexpected variable %s in the agent environment (%v)", e, envs)
		}
	}
	if !strings.Contains(text, "FOO,") {
		t.Errorf("configured env FOO missing: %q", text)
	}

	stream := harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("slow", "", nil)})
	taskID, pid := bkWaitWorkingPID(t, stream)
	if _, rpcErr := harness.At(gw.URL, harness.Bearer("tok-alice")).RPC(t, "CancelTask", map[string]any{"id": taskID}); rpcErr != nil {
		t.Fatalf("CancelTask: %v", rpcErr)
	}
	if state, _ := bkFinalText(stream.Rest(20 * time.Second)); state != "TASK_STATE_CANCELED" {
		t.Fatalf("canceled turn ended %s", state)
	}
	bkGroupGone(t, pid, 5*time.Second)

	start := time.Now()
	stream = harness.At(gw.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("slow", "", nil)})
	_, pid = bkWaitWorkingPID(t, stream)
	state, text := bkFinalText(stream.Rest(20 * time.Second))
	if state != "TASK_STATE_INPUT_REQUIRED" || text != "A temporary error occurred. Please retry." {
		t.Errorf("timed-out turn ended %s %q", state, text)
	}
	if d := time.Since(start); d < 2*time.Second || d > 10*time.Second {
		t.Errorf("timeout took %v, want about 2s", d)
	}
	bkGroupGone(t, pid, 5*time.Second)
}

// bkWaitWorking reads a stream until the backend's first text chunk and
// returns the task id.
func bkWaitWorking(t *testing.T, stream *harness.Stream) string {
	t.Helper()
	id, _ := bkWaitWorkingPID(t, stream)
	return id
}

// bkWaitWorkingPID is bkWaitWorking that also returns the "pid N" of the
// chunk.
func bkWaitWorkingPID(t *testing.T, stream *harness.Stream) (string, int) {
	t.Helper()
	var taskID, text string
	stream.Until(20*time.Second, "the agent worked", func(ev map[string]any) bool {
		if id := bkStr(ev, "task", "id"); id != "" {
			taskID = id
		}
		text = bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text")
		return strings.Contains(text, "pid ")
	})
	return taskID, bkPID(t, text)
}
