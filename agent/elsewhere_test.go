package agent

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TestSharedFollowEndsWithClient (SCALE-1, RPC-11): a SubscribeToTask on
// B of a turn running on A follows it (the Task first); when the client's
// context ends, Next returns within store.LiveBlock, and after Close the
// follower is gone. A CancelTask on B then stops A's backend (its context
// ends), answers CANCELED, and the stored state stays CANCELED.
func TestSharedFollowEndsWithClient(t *testing.T) {
	addr := startRedis(t)
	g := newGate()
	a := newSharedEnv(t, addr, Config{Backend: g})
	b := newSharedEnv(t, addr, Config{Backend: newGate()})
	t1 := a.send("", immediate(msg("slow")))
	g.waitStarted(t)
	b.waitState("", t1.ID, a2a.TaskStateWorking, 5*time.Second)

	rs, err := b.svc.SubscribeToTask(context.Background(), Call{}, &a2a.SubscribeToTaskRequest{ID: t1.ID})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rs.(*followStream); !ok {
		t.Fatalf("SubscribeToTask on B is a %T, want a follower of A's turn", rs)
	}
	ev, ok := rs.Next(context.Background())
	if !ok || ev.Task == nil || ev.Task.ID != t1.ID {
		t.Fatalf("first event on B: %+v %v, want the Task", ev, ok)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	start := time.Now()
	if ev, ok := rs.Next(ctx); ok {
		t.Fatalf("Next after the client left returned %+v", ev)
	}
	cancel()
	if d := time.Since(start); d > store.LiveBlock+time.Second {
		t.Fatalf("Next returned %v after the client left, want within %v", d, store.LiveBlock)
	}
	rs.Close()

	res, err := b.svc.CancelTask(context.Background(), Call{}, &a2a.CancelTaskRequest{ID: t1.ID})
	if err != nil || res.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask on B: %+v, %v; want CANCELED", res, err)
	}
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, live := a.hub.runs.Load(t1.ID); !live {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's turn still runs 2s after the cancel on B answered")
		}
	}
	// A's turn goroutine ends (its last write done): the stored state stays CANCELED.
	if !noneIn("(*Service).execute") {
		t.Fatal("A's turn goroutine never ended")
	}
	if got := a.getTask("", t1.ID); got.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("stored state %s, want CANCELED", got.Status.State)
	}
}
