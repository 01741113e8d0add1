package ws

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// XPORT-3: a client that goes away mid-stream has its stream released
// (closed: with cancel_on_disconnect its turn is canceled) and the
// open-stream gauge back at 0.
func TestPeerGoneReleasesStream(t *testing.T) {
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 40, Delay: 50 * time.Millisecond}, CancelOnDisconnect: true})
	h := New(jsonrpc.NewDispatcher(agent.NewHandler(svc)), httpx.TransportConfig{KeepAlive: 200 * time.Millisecond}, Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
	t.Cleanup(srv.Close)

	c := dial(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws")
	msg := `{"id":"s","payload":{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"s","parts":[{"text":"a b c d e f g h"}]}}}}`
	if err := c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Payload struct {
			Result a2a.StreamResponse `json:"result"`
		} `json:"payload"`
	}
	if err := json.Unmarshal(b, &f); err != nil || f.Payload.Result.Task == nil {
		t.Fatalf("first frame %s: %v", b, err)
	}
	if n := agenttest.OpenStreams(t, m); n != 1 {
		t.Fatalf("%v open streams while streaming, want 1", n)
	}
	_ = c.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for agenttest.OpenStreams(t, m) != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream still counts as open after the client went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	agenttest.WaitState(t, svc, f.Payload.Result.Task.ID, a2a.TaskStateCanceled)
}
