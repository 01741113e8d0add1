package tests

// End-to-end tests of the `caddy a2a` client (CLI-1, CLI-2)
// against the built gateway binary.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// clientResult is one run of the CLI.
type clientResult struct {
	Stdout, Stderr string
	Code           int
}

// clientRun runs `caddy a2a args…` with stdin (may be "") and env extras.
func clientRun(t *testing.T, stdin string, env []string, args ...string) clientResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), append([]string{"a2a"}, args...)...)
	cmd.Env = harness.Env(t.TempDir(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running caddy a2a %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return clientResult{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// clientCall is a CLI run in the background whose stdout is read line
// by line.
type clientCall struct {
	cmd    *exec.Cmd
	sc     *bufio.Scanner
	stderr strings.Builder
	lines  []string
}

// clientStart starts `caddy a2a args…` in the background (60 s at most).
func clientStart(t *testing.T, args ...string) *clientCall {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c := &clientCall{cmd: exec.CommandContext(ctx, harness.Binary(t), append([]string{"a2a"}, args...)...)}
	c.cmd.Env = harness.Env(t.TempDir())
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.cmd.Stderr = &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.sc = bufio.NewScanner(stdout)
	c.sc.Buffer(make([]byte, 1<<20), 1<<20)
	return c
}

// taskID reads stdout lines until a --json StreamResponse with a Task and
// returns its id ("" when stdout ended first).
func (c *clientCall) taskID() string {
	for c.sc.Scan() {
		c.lines = append(c.lines, c.sc.Text())
		var ev a2a.StreamResponse
		if json.Unmarshal(c.sc.Bytes(), &ev) == nil && ev.Task != nil {
			return ev.Task.ID
		}
	}
	return ""
}

// wait reads the rest of stdout and waits for the exit.
func (c *clientCall) wait() error {
	for c.sc.Scan() {
		c.lines = append(c.lines, c.sc.Text())
	}
	return c.cmd.Wait()
}

// wantCode fails unless the run exited with code; for non-zero codes it
// also checks there is exactly one "caddy a2a:" error line on stderr.
func (r clientResult) wantCode(t *testing.T, code int) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("exit code %d, want %d\nstdout: %s\nstderr: %s", r.Code, code, r.Stdout, r.Stderr)
	}
	if code != 0 {
		n := strings.Count(r.Stderr, "caddy a2a: ")
		if n != 1 || strings.Count(strings.TrimSpace(r.Stderr), "\n") > 1 {
			t.Fatalf("want one clear error line on stderr, got %q", r.Stderr)
		}
	}
}

// clientEvents parses NDJSON StreamResponses.
func clientEvents(t *testing.T, s string) []a2a.StreamResponse {
	t.Helper()
	var evs []a2a.StreamResponse
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var ev a2a.StreamResponse
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ev); err != nil {
			t.Fatalf("--json line is not a StreamResponse: %v: %s", err, sc.Text())
		}
		n := 0
		for _, set := range []bool{ev.Task != nil, ev.Message != nil, ev.StatusUpdate != nil, ev.ArtifactUpdate != nil} {
			if set {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("StreamResponse with %d members: %s", n, sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

// finalOf returns the task id, context id and last state of a stream.
func finalOf(evs []a2a.StreamResponse) (task, ctx string, st a2a.TaskState) {
	for _, ev := range evs {
		switch {
		case ev.Task != nil:
			task, ctx, st = ev.Task.ID, ev.Task.ContextID, ev.Task.Status.State
		case ev.StatusUpdate != nil:
			task, ctx, st = ev.StatusUpdate.TaskID, ev.StatusUpdate.ContextID, ev.StatusUpdate.Status.State
		}
	}
	return
}

const clientEcho = "a2a {\n\tcard {\n\t\tname client-e2e\n\t}\n\tbackend echo {\n\t\tchunks 5\n\t\tdelay 20ms\n\t}\n}"

// TestClientCallStreamFollowUp covers CLI-1: streaming call with --json,
// the plain (piped) output, a follow-up in the same context and task,
// --no-stream, the REST binding, task get and task list.
func TestClientCallStreamFollowUp(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, clientEcho)

	// Streaming call, machine output.
	r := clientRun(t, "", nil, "call", "--json", gw.URL, "hello gateway")
	r.wantCode(t, 0)
	evs := clientEvents(t, r.Stdout)
	if len(evs) < 3 || evs[0].Task == nil {
		t.Fatalf("want a task first and updates after it, got %d events:\n%s", len(evs), r.Stdout)
	}
	taskID, ctxID, st := finalOf(evs)
	if st != a2a.TaskStateInputRequired || taskID == "" || ctxID == "" {
		t.Fatalf("final state %s task %q context %q", st, taskID, ctxID)
	}
	var deltas int
	for _, ev := range evs {
		if u := ev.StatusUpdate; u != nil && u.Status.State == a2a.TaskStateWorking && u.Status.Message != nil {
			deltas++
		}
	}
	if deltas < 2 {
		t.Fatalf("want the answer streamed in several status updates, got %d", deltas)
	}
	if r.Stderr != "" {
		t.Fatalf("--json must keep stderr empty on success, got %q", r.Stderr)
	}

	// Piped output: the text exactly once, nothing decorative.
	r = clientRun(t, "", nil, "call", gw.URL, "--context", ctxID, "second turn")
	r.wantCode(t, 0)
	if r.Stdout != "Echo: second turn\n" {
		t.Fatalf("piped stdout = %q, want the answer once", r.Stdout)
	}
	if strings.ContainsAny(r.Stderr, "⠋⠙⠹⚙✓\x1b") || !strings.Contains(r.Stderr, "context="+ctxID) {
		t.Fatalf("piped stderr should hold only the plain summary with the same context, got %q", r.Stderr)
	}

	// Continue the input-required task itself, message from stdin.
	r = clientRun(t, "third turn from stdin\n", nil, "call", "--json", gw.URL, "--task", taskID)
	r.wantCode(t, 0)
	tid, cid, st := finalOf(clientEvents(t, r.Stdout))
	if tid != taskID || cid != ctxID || st != a2a.TaskStateInputRequired {
		t.Fatalf("follow-up on the task: got task %s context %s state %s", tid, cid, st)
	}

	// Non-streaming, REST binding.
	r = clientRun(t, "", nil, "call", "--no-stream", "--binding", "rest", gw.URL, "--context", ctxID, "over rest")
	r.wantCode(t, 0)
	if r.Stdout != "Echo: over rest\n" {
		t.Fatalf("--no-stream stdout = %q", r.Stdout)
	}

	// task get: the history holds all three turns of the task.
	r = clientRun(t, "", nil, "task", "get", "--json", gw.URL, taskID)
	r.wantCode(t, 0)
	var task a2a.Task
	if err := json.Unmarshal([]byte(r.Stdout), &task); err != nil {
		t.Fatalf("task get --json: %v: %s", err, r.Stdout)
	}
	var texts []string
	for _, m := range task.History {
		if m.Role == a2a.RoleUser {
			for _, p := range m.Parts {
				if p.Text != nil {
					texts = append(texts, *p.Text)
				}
			}
		}
	}
	if task.ID != taskID || !strings.Contains(strings.Join(texts, "|"), "hello gateway") || !strings.Contains(strings.Join(texts, "|"), "third turn from stdin") {
		t.Fatalf("task get: id %s user turns %q", task.ID, texts)
	}

	// task list --context: every task of the conversation, JSON and table.
	r = clientRun(t, "", nil, "task", "list", "--json", "--context", ctxID, gw.URL)
	r.wantCode(t, 0)
	var list a2a.ListTasksResponse
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil {
		t.Fatalf("task list --json: %v: %s", err, r.Stdout)
	}
	if list.TotalSize < 2 || len(list.Tasks) != int(list.TotalSize) {
		t.Fatalf("task list in context %s: %d tasks, total %d", ctxID, len(list.Tasks), list.TotalSize)
	}
	for _, lt := range list.Tasks {
		if lt.ContextID != ctxID {
			t.Fatalf("task list --context returned task of context %s", lt.ContextID)
		}
	}
	r = clientRun(t, "", nil, "task", "list", "--page-size", "1", "--status", "input-required", gw.URL)
	r.wantCode(t, 0)
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "TASK") || !strings.Contains(lines[1], "input-required") || !strings.Contains(r.Stderr, "--page-token ") {
		t.Fatalf("task list table:\n%s\nstderr: %s", r.Stdout, r.Stderr)
	}
}

// TestClientFilesCwdData checks --file (text and binary), --data and --cwd
// reach the agent as parts and metadata.
func TestClientFilesCwdData(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, clientEcho)
	dir := t.TempDir()
	txt := filepath.Join(dir, "notes.md")
	png := filepath.Join(dir, "pixel.png")
	if err := os.WriteFile(txt, []byte("# notes\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := clientRun(t, "", nil, "call", "--json", "--no-stream", "--file", txt, "--file", png, "--data", `{"k":1}`, "--cwd", dir, gw.URL, "with files")
	r.wantCode(t, 0)
	evs := clientEvents(t, r.Stdout)
	if len(evs) != 1 || evs[0].Task == nil {
		t.Fatalf("--no-stream --json: want one task line, got %s", r.Stdout)
	}
	tid := evs[0].Task.ID
	r = clientRun(t, "", nil, "task", "get", "--json", gw.URL, tid)
	r.wantCode(t, 0)
	var task a2a.Task
	if err := json.Unmarshal([]byte(r.Stdout), &task); err != nil {
		t.Fatal(err)
	}
	if len(task.History) == 0 {
		t.Fatalf("no history: %s", r.Stdout)
	}
	m := task.History[0]
	if len(m.Parts) != 4 {
		t.Fatalf("want 4 parts (text, md, png, data), got %+v", m.Parts)
	}
	if p := m.Parts[1]; p.Text == nil || *p.Text != "# notes\n" || p.MediaType != "text/markdown" || p.Filename != "notes.md" {
		t.Fatalf("text file part: %+v", p)
	}
	if p := m.Parts[2]; p.Kind() != "raw" || p.MediaType != "image/png" || len(p.Raw) != 16 {
		t.Fatalf("binary file part: kind %q type %q len %d", p.Kind(), p.MediaType, len(p.Raw))
	}
	if p := m.Parts[3]; p.Kind() != "data" || string(p.Data) != `{"k":1}` {
		t.Fatalf("data part: %+v", p)
	}
	ns, _ := m.Metadata["iac_code"].(map[string]any)
	if ns == nil || ns["cwd"] != dir {
		t.Fatalf("metadata.iac_code.cwd = %v, want %s", m.Metadata, dir)
	}
}

// TestClientCancel starts a slow streaming call, cancels the task from a
// second CLI process and checks the first exits 1 (task canceled).
func TestClientCancel(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname slow\n\t}\n\tbackend echo {\n\t\tchunks 40\n\t\tdelay 150ms\n\t}\n}")
	call := clientStart(t, "call", "--json", gw.URL, "a long prompt to echo back slowly")
	taskID := call.taskID()
	if taskID == "" {
		t.Fatalf("no task event: %q %s", call.lines, call.stderr.String())
	}
	r := clientRun(t, "", nil, "task", "list", "--json", "--status", "working", gw.URL)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, taskID) {
		t.Fatalf("task list --status working misses %s: %s", taskID, r.Stdout)
	}
	r = clientRun(t, "", nil, "task", "cancel", gw.URL, taskID)
	r.wantCode(t, 0)
	if r.Stdout != "task "+taskID+" canceled\n" {
		t.Fatalf("task cancel stdout %q", r.Stdout)
	}
	err := call.wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("streaming call after cancel: %v, want exit 1; stderr %q", err, call.stderr.String())
	}
	if !strings.Contains(call.stderr.String(), "caddy a2a: task "+taskID+" canceled") {
		t.Fatalf("stderr %q", call.stderr.String())
	}
	_, _, st := finalOf(clientEvents(t, strings.Join(call.lines, "\n")))
	if st != a2a.TaskStateCanceled {
		t.Fatalf("last streamed state %s, want canceled", st)
	}
	// Cancelling again is idempotent (A2A 1.0 §3.3.1): the canceled task.
	r = clientRun(t, "", nil, "task", "cancel", gw.URL, taskID)
	r.wantCode(t, 0)
	if r.Stdout != "task "+taskID+" canceled\n" {
		t.Fatalf("second cancel stdout %q stderr %q", r.Stdout, r.Stderr)
	}
	// A terminal task cannot be subscribed to.
	r = clientRun(t, "", nil, "task", "subscribe", gw.URL, taskID)
	r.wantCode(t, 3)
}

// TestClientSubscribe follows a running task from a second process.
func TestClientSubscribe(t *testing.T) {
	t.Parallel()
	// 10 chunks 500ms apart: the background turn runs 5 s, so the
	// subscribe (a new process) starts inside it on a busy machine too.
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname slow\n\t}\n\tbackend echo {\n\t\tchunks 10\n\t\tdelay 500ms\n\t}\n}")
	r := clientRun(t, "", nil, "call", "--json", "--no-stream", "--history", "0", gw.URL, "x")
	r.wantCode(t, 0)
	// --no-stream blocks until input-required; start a new turn on that
	// task without waiting (a streaming call in the background) and follow it.
	tid, _, _ := finalOf(clientEvents(t, r.Stdout))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bg := exec.CommandContext(ctx, harness.Binary(t), "a2a", "call", gw.URL, "--task", tid, "subscribe me please")
	bg.Env = harness.Env(t.TempDir())
	if err := bg.Start(); err != nil {
		t.Fatal(err)
	}
	defer bg.Wait()
	// The background turn runs (5 s of chunks) before the subscribe.
	harness.WaitState(t, gw.URL, tid, "TASK_STATE_WORKING", 10*time.Second)
	r = clientRun(t, "", nil, "task", "subscribe", gw.URL, tid)
	r.wantCode(t, 0)
	if !strings.HasSuffix(r.Stdout, "me please\n") || !strings.Contains(r.Stderr, "state=input-required") {
		t.Fatalf("subscribe output %q / %q", r.Stdout, r.Stderr)
	}
}

// TestClientPushConfigs drives the four push config commands; until push
// is enabled the gateway answers PushNotificationNotSupported, which must
// surface as one error line and exit code 3.
func TestClientPushConfigs(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, clientEcho)
	r := clientRun(t, "", nil, "call", "--json", "--no-stream", gw.URL, "push me")
	r.wantCode(t, 0)
	tid, _, _ := finalOf(clientEvents(t, r.Stdout))
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer hook.Close()

	r = clientRun(t, "", nil, "push", "create", "--json", "--id", "cfg1", "--push-token", "tok", gw.URL, tid, hook.URL+"/hook")
	if r.Code == 3 && strings.Contains(r.Stderr, "PUSH_NOTIFICATION_NOT_SUPPORTED") {
		r.wantCode(t, 3)
		for _, args := range [][]string{
			{"push", "get", gw.URL, tid, "cfg1"},
			{"push", "list", gw.URL, tid},
			{"push", "delete", gw.URL, tid, "cfg1"},
		} {
			r := clientRun(t, "", nil, args...)
			r.wantCode(t, 3)
			if !strings.Contains(r.Stderr, "PUSH_NOTIFICATION_NOT_SUPPORTED") {
				t.Fatalf("%v: stderr %q", args, r.Stderr)
			}
		}
		return
	}
	// Push is enabled: full CRUD.
	r.wantCode(t, 0)
	var cfg a2a.TaskPushNotificationConfig
	if err := json.Unmarshal([]byte(r.Stdout), &cfg); err != nil || cfg.ID != "cfg1" || cfg.TaskID != tid {
		t.Fatalf("push create: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "get", "--json", gw.URL, tid, "cfg1")
	r.wantCode(t, 0)
	r = clientRun(t, "", nil, "push", "list", "--json", gw.URL, tid)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, `"cfg1"`) {
		t.Fatalf("push list: %s", r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "delete", gw.URL, tid, "cfg1")
	r.wantCode(t, 0)
	r = clientRun(t, "", nil, "push", "get", gw.URL, tid, "cfg1")
	r.wantCode(t, 3)
}

// TestClientErrors checks CLI-2: every error path prints one line and the
// documented exit code.
func TestClientErrors(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, clientEcho)
	authed := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname authed\n\t}\n\tauth {\n\t\tbearer s3cret-token\n\t}\n\tbackend echo\n}")
	badCard := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"name":"x","supportedInterfaces":[{"url":"grpc.example:443","protocolBinding":"GRPC","protocolVersion":"1.0"}]}`))
	}))
	defer badCard.Close()
	notJSON := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("<html>")) }))
	defer notJSON.Close()

	cases := []struct {
		name   string
		env    []string
		args   []string
		code   int
		stderr string
	}{
		{"unreachable", nil, []string{"call", "http://127.0.0.1:1", "hi"}, 3, "connection refused"},
		{"401", nil, []string{"call", authed.URL, "hi"}, 3, "authentication failed (HTTP 401)"},
		{"wrong token", nil, []string{"task", "list", "--token", "nope", authed.URL}, 3, "authentication failed"},
		{"bad card json", nil, []string{"call", notJSON.URL, "hi"}, 3, "bad agent card"},
		{"no usable interface", nil, []string{"call", badCard.URL, "hi"}, 3, "no interface this client speaks"},
		{"task not found", nil, []string{"task", "get", gw.URL, "no-such-task"}, 3, "TASK_NOT_FOUND"},
		{"task not found rest", nil, []string{"task", "cancel", "--binding", "rest", gw.URL, "no-such-task"}, 3, "TASK_NOT_FOUND"},
		{"unknown flag", nil, []string{"call", "--bogus", gw.URL, "hi"}, 2, "unknown flag: --bogus"},
		{"missing args", nil, []string{"task", "get", gw.URL}, 2, "usage: caddy a2a task get"},
		{"bad url", nil, []string{"call", "ftp://x", "hi"}, 2, "invalid agent URL"},
		{"bad header", nil, []string{"call", "-H", "nocolon", gw.URL, "hi"}, 2, "--header"},
		{"bad data", nil, []string{"call", "--data", "{", gw.URL}, 2, "--data is not valid JSON"},
		{"missing file", nil, []string{"call", "--file", "/nonexistent/x", gw.URL}, 2, "--file /nonexistent/x"},
		{"bad page size", nil, []string{"task", "list", "--page-size", "500", gw.URL}, 2, "--page-size"},
		{"unknown subcommand", nil, []string{"task", "frobnicate"}, 2, "frobnicate"},
		{"no message", nil, []string{"call", gw.URL}, 2, "nothing to send"},
		{"verify key missing", nil, []string{"card", "get", "--verify-key", "/nonexistent.pem", gw.URL}, 2, "--verify-key /nonexistent.pem"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := clientRun(t, "", c.env, c.args...)
			r.wantCode(t, c.code)
			if !strings.Contains(r.Stderr, c.stderr) {
				t.Fatalf("stderr %q, want it to mention %q", r.Stderr, c.stderr)
			}
			if strings.Contains(r.Stderr, "s3cret") {
				t.Fatalf("secret leaked: %q", r.Stderr)
			}
		})
	}

	// Auth from the flag and from the environment.
	r := clientRun(t, "", nil, "call", "--token", "s3cret-token", authed.URL, "hi")
	r.wantCode(t, 0)
	r = clientRun(t, "", []string{"IACCODE_A2A_HTTP_TOKEN=s3cret-token"}, "task", "list", authed.URL)
	r.wantCode(t, 0)

	// card get: pretty by default, byte-exact with --raw.
	r = clientRun(t, "", nil, "card", "get", gw.URL)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, "\n  \"name\": \"client-e2e\"") {
		t.Fatalf("card get not pretty: %s", r.Stdout)
	}
	raw := clientRun(t, "", nil, "card", "get", "--raw", gw.URL)
	raw.wantCode(t, 0)
	resp, err := http.Get(gw.URL + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var served strings.Builder
	if _, err := bufio.NewReader(resp.Body).WriteTo(&served); err != nil {
		t.Fatal(err)
	}
	if raw.Stdout != served.String() {
		t.Fatalf("card get --raw differs from the served card")
	}
}

// TestClientPushSecretsMasked: `caddy a2a push create|get|list` print the
// notification token and the authentication credentials masked as
// "…(set)" unless --show-secrets, in both output forms.
func TestClientPushSecretsMasked(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `a2a {
	card {
		name client-push
	}
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}
}`)
	r := clientRun(t, "", nil, "call", "--json", "--no-stream", gw.URL, "push me")
	r.wantCode(t, 0)
	tid, _, _ := finalOf(clientEvents(t, r.Stdout))
	const tok, cred = "tok-s3cret-41", "cred-s3cret-42"
	hook := "http://127.0.0.1:9/hook"
	secrets := []string{"--push-token", tok, "--auth-scheme", "Bearer", "--auth-credentials", cred}

	masked := func(name, out string) {
		t.Helper()
		if strings.Contains(out, tok) || strings.Contains(out, cred) {
			t.Fatalf("%s prints a secret in clear:\n%s", name, out)
		}
		if strings.Count(out, "…(set)") != 2 || !strings.Contains(out, "Bearer") {
			t.Fatalf("%s: want the token and credentials masked as …(set), the scheme shown:\n%s", name, out)
		}
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--json", "--id", "c1", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	masked("push create --json", r.Stdout)
	var cfg a2a.TaskPushNotificationConfig
	if err := json.Unmarshal([]byte(r.Stdout), &cfg); err != nil || cfg.ID != "c1" || cfg.Token != "…(set)" || cfg.Authentication == nil || cfg.Authentication.Credentials != "…(set)" {
		t.Fatalf("push create --json: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--id", "c2", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	masked("push create", r.Stdout)
	for _, args := range [][]string{
		{"push", "get", gw.URL, tid, "c1"},
		{"push", "get", "--json", gw.URL, tid, "c1"},
		{"push", "get", "--binding", "rest", gw.URL, tid, "c1"},
	} {
		r = clientRun(t, "", nil, args...)
		r.wantCode(t, 0)
		masked(strings.Join(args[:3], " "), r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "list", "--json", gw.URL, tid)
	r.wantCode(t, 0)
	if strings.Contains(r.Stdout, tok) || strings.Contains(r.Stdout, cred) || strings.Count(r.Stdout, "…(set)") != 4 {
		t.Fatalf("push list: want two configs with masked secrets:\n%s", r.Stdout)
	}

	// --show-secrets prints them as the server returned them.
	r = clientRun(t, "", nil, "push", "get", "--json", "--show-secrets", gw.URL, tid, "c1")
	r.wantCode(t, 0)
	cfg = a2a.TaskPushNotificationConfig{}
	if err := json.Unmarshal([]byte(r.Stdout), &cfg); err != nil || cfg.Token != tok || cfg.Authentication == nil || cfg.Authentication.Credentials != cred {
		t.Fatalf("push get --show-secrets: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "list", "--show-secrets", gw.URL, tid)
	r.wantCode(t, 0)
	if strings.Count(r.Stdout, tok) != 2 || strings.Contains(r.Stdout, "…(set)") {
		t.Fatalf("push list --show-secrets:\n%s", r.Stdout)
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--show-secrets", "--id", "c1", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, tok) || !strings.Contains(r.Stdout, cred) {
		t.Fatalf("push create --show-secrets:\n%s", r.Stdout)
	}
}

// TestClientWebSocketBinding: the CLI over the card's websocket interface
// (`--binding websocket`, XPORT-3, CLI-1): a streaming and a unary call,
// task get, list, cancel (ending a stream in another process) and
// subscribe, and the auth error of an unauthenticated upgrade.
func TestClientWebSocketBinding(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, `a2a {
	card {
		name ws-client
	}
	auth {
		bearer ws-token
	}
	backend echo {
		chunks 30
		delay 60ms
	}
	websocket
}`)
	ws := []string{"--binding", "websocket", "--token", "ws-token"}
	run := func(args ...string) clientResult {
		return clientRun(t, "", nil, append(args[:1:1], append(append([]string{}, ws...), args[1:]...)...)...)
	}
	r := run("call", "--json", gw.URL, "over websocket")
	r.wantCode(t, 0)
	evs := clientEvents(t, r.Stdout)
	taskID, ctxID, st := finalOf(evs)
	if len(evs) < 5 || evs[0].Task == nil || st != a2a.TaskStateInputRequired {
		t.Fatalf("streaming call over websocket: %d events, state %s\n%s\n%s", len(evs), st, r.Stdout, r.Stderr)
	}
	r = run("call", "--no-stream", gw.URL, "--context", ctxID, "unary over websocket")
	r.wantCode(t, 0)
	if r.Stdout != "Echo: unary over websocket\n" {
		t.Fatalf("--no-stream over websocket: %q", r.Stdout)
	}
	r = clientRun(t, "", nil, "task", "get", "--json", "--binding", "websocket", "--token", "ws-token", gw.URL, taskID)
	r.wantCode(t, 0)
	var task a2a.Task
	if err := json.Unmarshal([]byte(r.Stdout), &task); err != nil || task.ID != taskID {
		t.Fatalf("task get over websocket: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, "task", "list", "--json", "--binding", "websocket", "--token", "ws-token", "--context", ctxID, gw.URL)
	r.wantCode(t, 0)
	var list a2a.ListTasksResponse
	if err := json.Unmarshal([]byte(r.Stdout), &list); err != nil || list.TotalSize < 2 {
		t.Fatalf("task list over websocket: %v %s", err, r.Stdout)
	}

	// A slow stream in the background, canceled from a second process.
	call := clientStart(t, append([]string{"call", "--json"}, append(ws, gw.URL, "a long prompt to echo back slowly over the socket")...)...)
	bgTask := call.taskID()
	if bgTask == "" {
		t.Fatalf("no task event: %q %s", call.lines, call.stderr.String())
	}
	r = clientRun(t, "", nil, "task", "cancel", "--binding", "websocket", "--token", "ws-token", gw.URL, bgTask)
	r.wantCode(t, 0)
	err := call.wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("streaming call after cancel: %v, want exit 1; stderr %q", err, call.stderr.String())
	}
	// Subscribing to a terminal task: the A2A error, exit 3.
	r = clientRun(t, "", nil, "task", "subscribe", "--binding", "websocket", "--token", "ws-token", gw.URL, bgTask)
	r.wantCode(t, 3)
	if !strings.Contains(r.Stderr, "UNSUPPORTED_OPERATION") && !strings.Contains(r.Stderr, "terminal") {
		t.Fatalf("subscribe to a canceled task: %q", r.Stderr)
	}
	// No token: the upgrade is refused, an auth error (exit 3).
	r = clientRun(t, "", nil, "task", "list", "--binding", "websocket", gw.URL)
	r.wantCode(t, 3)
	if !strings.Contains(r.Stderr, "authentication failed (HTTP 401)") {
		t.Fatalf("unauthenticated: %q", r.Stderr)
	}
}
