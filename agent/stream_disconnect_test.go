package agent

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// countingBus is an event bus over store.NewStoredBus that counts the
// subscriptions not yet closed.
type countingBus struct {
	store.LocalBus
	open *atomic.Int64
}

func (b countingBus) Open(taskID string, o store.LogOptions) (store.EventLog, context.Context) {
	l, ctx := b.LocalBus.Open(taskID, o)
	return countingLog{EventLog: l, open: b.open}, ctx
}

type countingLog struct {
	store.EventLog
	open *atomic.Int64
}

func (l countingLog) Subscribe(after uint64) (store.Subscription, error) {
	s, err := l.EventLog.Subscribe(after)
	if err != nil {
		return nil, err
	}
	l.open.Add(1)
	return &countingSub{Subscription: s, open: l.open}, nil
}

type countingSub struct {
	store.Subscription
	open   *atomic.Int64
	closed atomic.Bool
}

func (s *countingSub) Close() {
	if !s.closed.Swap(true) {
		s.open.Add(-1)
	}
	s.Subscription.Close()
}

// A client that closes its connection while the turn of its
// SendStreamingMessage stream is still running (no keep-alive due for an
// hour) ends the stream at once: its subscription is released and the
// stream no longer counts as open, while the turn goes on (no
// CancelOnDisconnect) and still ends normally.
func TestSSEClientCloseReleasesSubscriptionPromptly(t *testing.T) {
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var open atomic.Int64
	hub, err := NewHubWithBus(context.Background(), st, countingBus{LocalBus: store.NewStoredBus(st), open: &open})
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	svc := NewService(hub, Config{Backend: g})
	h := NewHTTPHandler(svc, TransportConfig{KeepAlive: time.Hour})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
	t.Cleanup(func() { srv.CloseClientConnections(); _ = hub.Close(); srv.Close(); _ = st.Close() })

	addr := strings.TrimPrefix(srv.URL, "http://")
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	body := rpcBody(1, a2a.MethodSendStreamingMessage, sendReq(msg("away")))
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body)
	taskID := g.waitStarted(t)
	// Read up to the WORKING chunk: the stream is open and idle.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	for seen := ""; !strings.Contains(seen, "working on it"); {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream: %v after %q", err, seen)
		}
		seen += line
	}
	if n := open.Load(); n != 1 {
		t.Fatalf("%d open subscriptions while the stream is open, want 1", n)
	}
	if n := hub.streams.Load(); n != 1 {
		t.Fatalf("%d open streams, want 1", n)
	}

	c.Close()
	deadline := time.Now().Add(2 * time.Second)
	for open.Load() != 0 || hub.streams.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("2s after the client closed: %d open subscriptions, %d open streams", open.Load(), hub.streams.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := svc.mustTask(t, taskID); got.Status.State != a2a.TaskStateWorking {
		t.Fatalf("the turn is %s after its client left, want still WORKING", got.Status.State)
	}
	g.release <- struct{}{}
	deadline = time.Now().Add(10 * time.Second)
	for svc.mustTask(t, taskID).Status.State != a2a.TaskStateInputRequired {
		if time.Now().After(deadline) {
			t.Fatal("the turn did not end after its client left")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustTask reads a task of the anonymous owner.
func (s *Service) mustTask(t *testing.T, id string) a2a.Task {
	t.Helper()
	task, err := s.GetTask(context.Background(), Call{Version: "1.0"}, &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatalf("GetTask %s: %v", id, err)
	}
	return *task
}
