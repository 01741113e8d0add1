package tests

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestClientWebSocketBinding: the CLI over the card's websocket interface
// (`--binding websocket`, XPORT-3, CLI-1): a streaming and a unary call,
// task get, list, cancel (ending a stream in another process) and
// subscribe, and the auth error of an unauthenticated upgrade.
func TestClientWebSocketBinding(t *testing.T) {
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
