package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/ws"
)

// wsClient returns a client over the websocket interface of a real
// WebSocket binding (SQLite store, echo backend) on an httptest server.
func wsClient(t *testing.T) *Client {
	t.Helper()
	svc, _ := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 3, Delay: 5 * time.Millisecond}})
	h := ws.New(jsonrpc.NewDispatcher(agent.NewHandler(svc)), httpx.TransportConfig{}, ws.Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
	t.Cleanup(func() {
		_ = h.Close()
		srv.Close()
	})
	card := &a2a.AgentCard{Name: "t", SupportedInterfaces: []a2a.AgentInterface{
		{URL: srv.URL + "/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		{URL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws", ProtocolBinding: a2a.BindingWebSocket, ProtocolVersion: "1.0"},
	}}
	c, err := New(card, nil, Options{Binding: BindingWebSocket})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if c.Interface.ProtocolBinding != a2a.BindingWebSocket {
		t.Fatalf("selected %+v, want the websocket interface", c.Interface)
	}
	return c
}

func textMsg(s string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{Role: a2a.RoleUser, MessageID: s, Parts: []a2a.Part{{Text: &s}}}}
}

// TestWebSocketConcurrentCalls: one client runs unary calls and streams
// concurrently over its one connection (XPORT-3); each gets its own
// answers, and an A2A error comes back as one.
func TestWebSocketConcurrentCalls(t *testing.T) {
	c := wsClient(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := 0; i < 15; i++ { // 30 in flight: under the default max_in_flight 32
		wg.Add(2)
		go func() {
			defer wg.Done()
			res, err := c.SendMessage(ctx, textMsg("unary"))
			if err == nil && (res.Task == nil || res.Task.Status.State != a2a.TaskStateInputRequired) {
				err = errors.New("unary: not an input-required task")
			}
			errs <- err
		}()
		go func() {
			defer wg.Done()
			var last a2a.StreamResponse
			n := 0
			err := c.SendStreamingMessage(ctx, textMsg("stream"), func(ev a2a.StreamResponse) error { last = ev; n++; return nil })
			if err == nil && (n < 3 || last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateInputRequired) {
				err = errors.New("stream: did not end input-required")
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if _, err := c.GetTask(ctx, "no-such-task", -1); err == nil || !strings.Contains(err.Error(), "TASK_NOT_FOUND") && !strings.Contains(err.Error(), "not found") {
		t.Errorf("GetTask of an unknown task: %v", err)
	}
	if err := c.SubscribeToTask(ctx, "no-such-task", func(a2a.StreamResponse) error { return nil }); err == nil {
		t.Error("SubscribeToTask of an unknown task: no error")
	}
	// A canceled context interrupts a stream and cancels it by frame.
	cctx, cancel := context.WithTimeout(ctx, 2*time.Millisecond)
	defer cancel()
	err := c.SendStreamingMessage(cctx, textMsg("interrupted"), func(a2a.StreamResponse) error { return nil })
	if classify(err) != "transport" && classify(err) != "interrupted" {
		t.Errorf("stream with an expiring context: %v", err)
	}
	if _, err := c.ListTasks(ctx, &a2a.ListTasksRequest{}); err != nil {
		t.Errorf("the connection after an interrupted stream: %v", err)
	}
}

// TestSelectWebSocketInterface: --binding websocket picks the card's
// websocket interface (ws or wss URL only); auto selection never does.
func TestSelectWebSocketInterface(t *testing.T) {
	card := &a2a.AgentCard{SupportedInterfaces: []a2a.AgentInterface{
		{URL: "http://h/ws", ProtocolBinding: "websocket", ProtocolVersion: "1.0"},
		{URL: "wss://h/ws", ProtocolBinding: "websocket", ProtocolVersion: "1.0"},
		{URL: "https://h/", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"},
	}}
	in, err := SelectInterface(card, BindingWebSocket)
	if err != nil || in.URL != "wss://h/ws" {
		t.Fatalf("forced websocket: %+v %v", in, err)
	}
	if in, err := SelectInterface(card, BindingAuto); err != nil || in.ProtocolBinding != "JSONRPC" {
		t.Fatalf("auto: %+v %v", in, err)
	}
	card.SupportedInterfaces = card.SupportedInterfaces[2:]
	if _, err := SelectInterface(card, BindingWebSocket); classify(err) != "transport" {
		t.Fatalf("no websocket interface: %v", err)
	}
}
