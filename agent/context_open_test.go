package agent

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TestSharedMintedContext (issue 32, SCALE-1/3): a turn in a context the
// gateway minted stores the context's record with its lease (one round
// trip, store.ContextOpener): after the turn the record is there, bound
// to the turn's workspace, the lease is free, and the context carries its
// session state to another instance.
func TestSharedMintedContext(t *testing.T) {
	addr := startRedis(t)
	a := newSharedEnv(t, addr, Config{Backend: historyBackend{}})
	b := newSharedEnv(t, addr, Config{Backend: historyBackend{}})
	first := a.send("alice", sendReq(msg("one")))
	if first.Status.State != a2a.TaskStateCompleted || first.ContextID == "" {
		t.Fatalf("first turn: %s in %q", first.Status.State, first.ContextID)
	}
	st, err := store.OpenRedis(context.Background(), store.RedisOptions{URLs: []string{"redis://" + addr}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rec, err := st.GetContext(ctx, "alice", first.ContextID)
	if err != nil {
		t.Fatalf("the minted context's record: %v", err)
	}
	if rec.CreatedAt.IsZero() || time.Since(rec.CreatedAt) > time.Minute {
		t.Fatalf("record %+v", rec)
	}
	l, ok, err := st.TryLeaseContext(ctx, "alice", first.ContextID, time.Second)
	if err != nil || !ok {
		t.Fatalf("the context's lease is still held after the turn: %v, %v", ok, err)
	}
	_ = l.Release(ctx)
	second := b.send("alice", sendReq(inContext(msg("two"), first.ContextID)))
	if second.Status.State != a2a.TaskStateCompleted || !containsText(second, "one|two") {
		t.Fatalf("second turn on B: %s %+v", second.Status.State, second)
	}
}
