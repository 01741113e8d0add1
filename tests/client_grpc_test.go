package tests

// CLI-1 with --binding grpc: `caddy a2a call` and `task get|list|cancel|
// subscribe` over the gateway's GRPC interface (XPORT-2), h2c because the
// agent URL is http://; the access log shows only gRPC calls.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	a2av1 "github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/client"
)

func TestClientGRPCBinding(t *testing.T) {
	t.Parallel()
	gw := interopStartGRPCGateway(t, "backend echo", false)

	r := clientRun(t, "", nil, "call", "--json", "--binding", "grpc", gw.BaseURL, "hello over grpc")
	r.wantCode(t, 0)
	taskID, ctxID, st := finalOf(clientEvents(t, r.Stdout))
	if taskID == "" || st != a2av1.TaskStateInputRequired || !strings.Contains(r.Stdout, "Echo: hello over grpc") {
		t.Fatalf("call over grpc: task %q state %q\n%s", taskID, st, r.Stdout)
	}

	r = clientRun(t, "", nil, "call", "--json", "--no-stream", "--binding", "grpc", "--context", ctxID, gw.BaseURL, "second turn")
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, "Echo: second turn") {
		t.Errorf("call --no-stream over grpc: %s", r.Stdout)
	}

	r = clientRun(t, "", nil, "task", "get", "--json", "--binding", "grpc", gw.BaseURL, taskID)
	r.wantCode(t, 0)
	var task a2av1.Task
	if err := json.Unmarshal([]byte(r.Stdout), &task); err != nil || task.ID != taskID {
		t.Errorf("task get over grpc: %v %s", err, r.Stdout)
	}

	r = clientRun(t, "", nil, "task", "list", "--json", "--binding", "grpc", "--context", ctxID, gw.BaseURL)
	r.wantCode(t, 0)
	if strings.Count(r.Stdout, ctxID) < 2 {
		t.Errorf("task list over grpc: want the two tasks of %s:\n%s", ctxID, r.Stdout)
	}

	// RPC-11 over gRPC: a subscription to the input-required task carries
	// the events of its follow-up turn.
	sub := clientStart(t, "task", "subscribe", "--json", "--binding", "grpc", gw.BaseURL, taskID)
	if id := sub.taskID(); id != taskID {
		t.Fatalf("task subscribe over grpc: first task %q, want %s (stderr %s)", id, taskID, sub.stderr.String())
	}
	clientRun(t, "", nil, "call", "--json", "--binding", "grpc", "--task", taskID, gw.BaseURL, "follow-up for the subscriber").wantCode(t, 0)
	if err := sub.wait(); err != nil {
		t.Fatalf("task subscribe over grpc: %v (stderr %s)", err, sub.stderr.String())
	}
	if !strings.Contains(strings.Join(sub.lines, "\n"), "Echo: follow-up for the subscriber") {
		t.Errorf("subscribe events lack the follow-up's answer:\n%s", strings.Join(sub.lines, "\n"))
	}

	r = clientRun(t, "", nil, "task", "cancel", "--binding", "grpc", gw.BaseURL, taskID)
	r.wantCode(t, 0)
	r = clientRun(t, "", nil, "task", "get", "--json", "--binding", "grpc", gw.BaseURL, taskID)
	if !strings.Contains(r.Stdout, "TASK_STATE_CANCELED") {
		t.Errorf("task after cancel over grpc: %s", r.Stdout)
	}
	// An A2A error over gRPC keeps its reason and exit code 3.
	r = clientRun(t, "", nil, "task", "get", "--binding", "grpc", gw.BaseURL, "no-such-task")
	r.wantCode(t, 3)
	if !strings.Contains(r.Stderr, "TASK_NOT_FOUND") {
		t.Errorf("task get (unknown) over grpc: stderr %q, want TASK_NOT_FOUND", r.Stderr)
	}
	interopCheckBindingUsed(t, a2a.TransportProtocolGRPC, gw)
}

// The client library and the CLI over the GRPC interface of a TLS agent
// (`tls internal`): the library with the TLS settings of its HTTP client,
// the CLI with the system roots (SSL_CERT_FILE names the test CA).
func TestClientGRPCBindingTLS(t *testing.T) {
	t.Parallel()
	gw := interopStartGRPCGateway(t, "backend echo", true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := client.Dial(ctx, gw.BaseURL, client.Options{HTTPClient: gw.httpClient, Binding: client.BindingGRPC})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer cl.Close()
	if cl.Interface.ProtocolBinding != a2av1.BindingGRPC {
		t.Fatalf("selected %+v, want the GRPC interface", cl.Interface)
	}
	res, err := cl.SendMessage(ctx, &a2av1.SendMessageRequest{Message: &a2av1.Message{MessageID: "m-tls", Role: a2av1.RoleUser,
		Parts: []a2av1.Part{a2av1.TextPart("hello over grpc and tls")}}})
	if err != nil || res.Task == nil || res.Task.Status.State != a2av1.TaskStateInputRequired {
		t.Fatalf("SendMessage over grpc+tls = %+v, %v", res, err)
	}
	got, err := cl.GetTask(ctx, res.Task.ID, 0)
	if err != nil || got.ID != res.Task.ID || len(got.History) != 0 {
		t.Fatalf("GetTask(historyLength 0) over grpc+tls = %+v, %v", got, err)
	}

	ca := filepath.Join(gw.Dir, "storage", "pki", "authorities", "local", "root.crt")
	r := clientRun(t, "", []string{"SSL_CERT_FILE=" + ca}, "call", "--json", "--binding", "grpc", gw.BaseURL, "cli over grpc and tls")
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, "Echo: cli over grpc and tls") {
		t.Errorf("CLI over grpc+tls: %s", r.Stdout)
	}
	interopCheckBindingUsed(t, a2a.TransportProtocolGRPC, gw)
}
