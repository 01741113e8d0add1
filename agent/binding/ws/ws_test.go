package ws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/wsframe"
)

// newTestHandler serves a WebSocket binding over a real SQLite store and a
// slow echo backend on an httptest server.
func newTestHandler(t *testing.T, cfg Config) (*Handler, string) {
	t.Helper()
	svc, _ := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{Chunks: 20, Delay: 50 * time.Millisecond}})
	h := New(jsonrpc.NewDispatcher(agent.NewHandler(svc)), httpx.TransportConfig{KeepAlive: 200 * time.Millisecond}, cfg)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
	t.Cleanup(srv.Close)
	return h, "ws" + strings.TrimPrefix(srv.URL, "http") + "/ws"
}

func dial(t *testing.T, u string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"A2A-Version": {"1.0"}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startStream(t *testing.T, c *websocket.Conn, id string) {
	t.Helper()
	msg := `{"id":"` + id + `","payload":{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"` + id + `","parts":[{"text":"a b c d e f g h"}]}}}}`
	if err := c.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	// The first event arrives: the stream is open.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var f wsframe.Response
	if err := json.Unmarshal(b, &f); err != nil || f.Payload == nil {
		t.Fatalf("first frame %s: %v", b, err)
	}
}

// waitGoroutines waits for the goroutine count to drop to at most n.
func waitGoroutines(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: %d, want <= %d\n%s", runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseEndsConnections: Close (shutdown, reload) closes every open
// connection with 1001 and every per-connection goroutine ends (XPORT-3).
func TestCloseEndsConnections(t *testing.T) {
	h, u := newTestHandler(t, Config{})
	base := runtime.NumGoroutine()
	c := dial(t, u)
	defer c.CloseNow()
	startStream(t, c, "a")
	startStream(t, c, "b")
	done := make(chan error, 1)
	go func() {
		for {
			if _, _, err := c.Read(context.Background()); err != nil {
				done <- err
				return
			}
		}
	}()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
			t.Fatalf("client read after Close: %v, want status 1001", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not end after Close")
	}
	h.mu.Lock()
	n := len(h.conns)
	h.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d connections still tracked after Close", n)
	}
	waitGoroutines(t, base+2) // the turns may still be running
	// A connection after Close is refused with 1001 at once.
	c2 := dial(t, u)
	defer c2.CloseNow()
	_, _, err := c2.Read(context.Background())
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusGoingAway {
		t.Fatalf("after Close: %v, want 1001", err)
	}
}

// TestDisconnectEndsGoroutines: a client that drops the connection with
// streams open leaves no goroutine of the connection behind (XPORT-3).
func TestDisconnectEndsGoroutines(t *testing.T) {
	h, u := newTestHandler(t, Config{})
	base := runtime.NumGoroutine()
	c := dial(t, u)
	startStream(t, c, "a")
	startStream(t, c, "b")
	_ = c.CloseNow()
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.conns)
		h.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the connection is still tracked after the client went away")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Wait for the turns (20 chunks of 50ms) to end too: nothing remains.
	waitGoroutines(t, base)
}

// TestConfigDefaults pins the documented defaults: 32 in flight, 4 MiB
// messages unless the body limit is smaller, the transport's keep-alive.
func TestConfigDefaults(t *testing.T) {
	c := Config{}.WithDefaults(7*time.Second, 32<<20)
	if c.Path != "/ws" || c.MaxInFlight != 32 || c.MaxMessageBytes != 4<<20 || c.KeepAlive != 7*time.Second || c.WriteTimeout != 30*time.Second {
		t.Fatalf("defaults: %+v", c)
	}
	if c := (Config{}).WithDefaults(0, 1<<20); c.MaxMessageBytes != 1<<20 || c.KeepAlive != 15*time.Second {
		t.Fatalf("small body limit: %+v", c)
	}
	if c := (Config{MaxMessageBytes: 64 << 20}).WithDefaults(0, 1<<20); c.MaxMessageBytes != 64<<20 {
		t.Fatalf("explicit limit: %+v", c)
	}
}
