package store

import (
	"context"
	"testing"
	"time"
)

// TestRedisCreateAndLeaseContext (issue 32, SCALE-3, INPUT-1): one call
// creates the record unless it exists and takes the lease unless it is
// held; the first creator's workspace stays.
func TestRedisCreateAndLeaseContext(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.Now()
	rec := ContextRecord{Owner: "alice", ID: "c1", Cwd: "/w/one", CreatedAt: now, UpdatedAt: now}
	l, created, ok, err := s.CreateAndLeaseContext(ctx, rec, time.Minute)
	if err != nil || !created || !ok {
		t.Fatalf("first call: created %v, leased %v, %v", created, ok, err)
	}
	rec2 := rec
	rec2.Cwd = "/w/two"
	if _, created, ok, err := s.CreateAndLeaseContext(ctx, rec2, time.Minute); err != nil || created || ok {
		t.Fatalf("second call while leased: created %v, leased %v, %v", created, ok, err)
	}
	if _, ok, _ := s.TryLeaseContext(ctx, "alice", "c1", time.Minute); ok {
		t.Fatal("TryLeaseContext took a held lease")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2, created, ok, err := s.CreateAndLeaseContext(ctx, rec2, time.Minute)
	if err != nil || created || !ok {
		t.Fatalf("after release: created %v, leased %v, %v", created, ok, err)
	}
	defer l2.Release(ctx)
	got, err := s.GetContext(ctx, "alice", "c1")
	if err != nil || got.Cwd != "/w/one" {
		t.Fatalf("record %+v, %v: want the first creator's workspace", got, err)
	}
	if ttl, _ := s.c.PTTL(ctx, s.leaseKey("alice", "c1")).Result(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("lease TTL %v", ttl)
	}
	// State given: stored with the record.
	rec3 := ContextRecord{Owner: "alice", ID: "c3", Cwd: "/w", CreatedAt: now, UpdatedAt: now, State: []byte("st")}
	l3, created, ok, err := s.CreateAndLeaseContext(ctx, rec3, time.Minute)
	if err != nil || !created || !ok {
		t.Fatalf("with state: created %v, leased %v, %v", created, ok, err)
	}
	defer l3.Release(ctx)
	if got, err := s.GetContext(ctx, "alice", "c3"); err != nil || string(got.State) != "st" {
		t.Fatalf("record with state %+v, %v", got, err)
	}
}
