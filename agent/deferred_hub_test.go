package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// newDeferredEnv starts an endpoint over a hub built, as the a2a app
// builds it at provisioning, before its store opens (OPS-6).
func newDeferredEnv(t *testing.T, d *store.Deferred, cfg Config) *testEnv {
	t.Helper()
	hub := NewDeferredHub(d)
	return serveTestEnv(t, hub, NewService(hub, cfg), TransportConfig{}, func() { _ = d.Close() })
}

// TestDeferredHubReadsCapabilitiesAtOpen (OPS-6, SCALE-1): a hub built
// over a store that is not open yet has none of its parts (a call fails,
// nothing panics); once the store opens, the hub reads what it can do
// (here Redis: shared), so its cancel listener runs and a CancelTask
// sent on another instance stops the turn running on it.
func TestDeferredHubReadsCapabilitiesAtOpen(t *testing.T) {
	addr := startRedis(t)
	d := store.NewDeferred()
	g := newGate()
	a := newDeferredEnv(t, d, Config{Backend: g})
	if a.hub.shared() != nil {
		t.Fatal("shared before the store opened")
	}
	_, err := a.svc.GetTask(context.Background(), Call{}, &a2a.GetTaskRequest{ID: "t"})
	var rpcErr *a2a.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != a2a.CodeInternalError {
		t.Fatalf("GetTask before Open: %v, want an internal error", err)
	}
	st, err := store.OpenRedis(context.Background(), store.RedisOptions{URLs: []string{"redis://" + addr}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Open(st); err != nil {
		t.Fatal(err)
	}
	if a.hub.shared() == nil {
		t.Fatal("not shared once the Redis store opened")
	}
	b := newSharedEnv(t, addr, Config{Backend: newGate()})
	t1 := a.send("", immediate(msg("slow")))
	g.waitStarted(t)
	res, err := b.svc.CancelTask(context.Background(), Call{}, &a2a.CancelTaskRequest{ID: t1.ID})
	if err != nil || res.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on B: %+v, %v; want CANCELED", res, err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, live := a.hub.runs.Load(t1.ID); !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the deferred hub's turn still runs 2s after the cancel on B answered")
		}
	}
}
