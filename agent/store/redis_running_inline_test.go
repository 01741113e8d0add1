package store

import (
	"context"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisRunningSetInWrite (issue 32, SCALE-2): without Cluster slots a
// task enters this instance's running set with the write that stores it
// WORKING and leaves it with the write of its final state, in those
// writes' scripts (no round trip of their own); a second WORKING write
// sends nothing more.
func TestRedisRunningSetInWrite(t *testing.T) {
	s, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + redisAddr(t) + "/0"}, KeyPrefix: newTestRedis(t).p, InstanceLease: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	run := s.runKeyFor(s.inst.id, "t1")
	// The scripts loaded first (a first EVALSHA may be answered NOSCRIPT).
	mustPut(t, s, "alice", mkTask("warm", "c0", a2a.TaskStateWorking, now))
	if _, err := s.PutTaskWithJobs(ctx, "alice", mkTask("warm", "c0", a2a.TaskStateCompleted, now), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	trips := &tripCounter{}
	s.c.AddHook(trips)
	mustPut(t, s, "alice", mkTask("t1", "c1", a2a.TaskStateWorking, now))
	if n := trips.n.Load(); n != 1 {
		t.Fatalf("a WORKING write took %d round trips; want 1", n)
	}
	if ok, _ := s.c.SIsMember(ctx, run, "t1").Result(); !ok {
		t.Fatal("the WORKING task is not in the instance's running set")
	}
	mustPut(t, s, "alice", mkTask("t1", "c1", a2a.TaskStateWorking, now.Add(time.Millisecond)))
	if _, err := s.PutTaskWithJobs(ctx, "alice", mkTask("t1", "c1", a2a.TaskStateCompleted, now.Add(2*time.Millisecond)), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if n := trips.n.Load(); n != 4 { // 3 writes, 1 SISMEMBER
		t.Fatalf("%d round trips; want 4 (one per write, one check)", n)
	}
	if ok, _ := s.c.SIsMember(ctx, run, "t1").Result(); ok {
		t.Fatal("the completed task is still in the running set")
	}
	if _, had := s.inst.tracked.Load("t1"); had {
		t.Fatal("the handle still tracks the completed task")
	}
}
