package ws

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/promtest"
)

// XPORT-3: a client that goes away mid-stream has its stream released
// (closed: with cancel_on_disconnect its turn is canceled) and the
// open-stream gauge back at 0.
func TestPeerGoneReleasesStream(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := agent.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	svc := agent.NewService(hub, agent.Config{Backend: backend.EchoBackend{Chunks: 40, Delay: 50 * time.Millisecond}, Metrics: m, CancelOnDisconnect: true})
	h := New(svc, httpx.TransportConfig{KeepAlive: 200 * time.Millisecond}, Config{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
	t.Cleanup(func() { srv.Close(); hub.SetDrainTimeout(0); _ = hub.Close(); _ = st.Close() })

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
	if n := promtest.Gauge(t, m, "caddy_a2a_open_streams"); n != 1 {
		t.Fatalf("%v open streams while streaming, want 1", n)
	}
	_ = c.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for promtest.Gauge(t, m, "caddy_a2a_open_streams") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stream still counts as open after the client went away")
		}
		time.Sleep(10 * time.Millisecond)
	}
	for {
		task, err := svc.GetTask(context.Background(), agent.Call{Version: "1.0"}, &a2a.GetTaskRequest{ID: f.Payload.Result.Task.ID})
		if err == nil && task.Status.State == a2a.TaskStateCanceled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task: %v %v, want canceled (the stream was not closed)", task, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
