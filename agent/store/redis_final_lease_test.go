package store

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisFinalWriteReleasesLease (issue 32, SCALE-3): a lease handed to
// a task's final write is given up by that write (the next holder can take
// it at once) and its Release sends nothing; a write that does not end a
// turn leaves it held; in a Cluster the hand-over does nothing and Release
// gives the lease up.
func TestRedisFinalWriteReleasesLease(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.Now()
	l, _, ok, err := s.CreateAndLeaseContext(ctx, ContextRecord{Owner: "alice", ID: "c1", CreatedAt: now, UpdatedAt: now}, time.Minute)
	if err != nil || !ok {
		t.Fatalf("lease: %v %v", ok, err)
	}
	s.ReleaseWithFinalWrite(l, "t1")
	mustPut(t, s, "alice", mkTask("t1", "c1", a2a.TaskStateWorking, now))
	if _, ok, _ := s.TryLeaseContext(ctx, "alice", "c1", time.Minute); ok {
		t.Fatal("a WORKING write gave the lease up")
	}
	if _, err := s.PutTaskWithJobs(ctx, "alice", mkTask("t1", "c1", a2a.TaskStateInputRequired, now), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	trips := &tripCounter{}
	s.c.AddHook(trips)
	if held, err := l.Renew(ctx, time.Minute); err != nil || !held {
		t.Fatalf("Renew after the final write: %v, %v", held, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n := trips.n.Load(); n != 0 {
		t.Fatalf("Renew and Release after the final write sent %d round trips; want none", n)
	}
	l2, ok, err := s.TryLeaseContext(ctx, "alice", "c1", time.Minute)
	if err != nil || !ok {
		t.Fatalf("the final write did not give the lease up: %v %v", ok, err)
	}
	// A hand-over that no write took is forgotten by Release, which gives
	// the lease up itself.
	s.ReleaseWithFinalWrite(l2, "t2")
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.finalLeases) != 0 {
		t.Fatalf("hand-overs left: %v", s.finalLeases)
	}
	l3, ok, err := s.TryLeaseContext(ctx, "alice", "c1", time.Minute)
	if err != nil || !ok {
		t.Fatalf("Release did not give the lease up: %v %v", ok, err)
	}
	mustPut(t, s, "alice", mkTask("t2", "c1", a2a.TaskStateCompleted, now))
	if _, ok, _ := s.TryLeaseContext(ctx, "alice", "c1", time.Minute); ok {
		t.Fatal("a write the lease was not handed to gave it up")
	}
	_ = l3.Release(ctx)

	// Cluster path: nothing handed over.
	cs := newTestRedis(t)
	cs.cluster = true
	l4, ok, err := cs.TryLeaseContext(ctx, "bob", "c1", time.Minute)
	if err != nil || !ok {
		t.Fatal(err)
	}
	cs.ReleaseWithFinalWrite(l4, "t4")
	if _, err := cs.PutTaskWithJobs(ctx, "bob", mkTask("t4", "c1", a2a.TaskStateCompleted, now), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cs.TryLeaseContext(ctx, "bob", "c1", time.Minute); ok {
		t.Fatal("the cluster path's write gave the lease up")
	}
	if err := l4.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := cs.TryLeaseContext(ctx, "bob", "c1", time.Minute); !ok {
		t.Fatal("Release on the cluster path did not give the lease up")
	}
}
