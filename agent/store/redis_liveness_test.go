package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisReapDeadInstance (SCALE-2, RPC-12): when instance A stops
// renewing its lease, instance B marks A's tasks still running FAILED
// with the crash message — not before the lease ended — logs the FAILED
// status update and queues its push notification; A's finished tasks and
// B's own running tasks are left alone, and an instance is reaped once.
func TestRedisReapDeadInstance(t *testing.T) {
	addr := "redis://" + redisAddr(t) + "/0"
	prefix := newTestRedis(t).p
	open := func(lease time.Duration) *Redis {
		s, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{addr}, KeyPrefix: prefix, InstanceLease: lease, InterruptedMessage: "crashed"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	ctx := context.Background()
	a := open(time.Second)
	b := open(time.Hour) // reaps by hand below
	now := time.Now()
	for _, tk := range []*a2a.Task{mkTask("run1", "c1", a2a.TaskStateWorking, now), mkTask("sub1", "c2", a2a.TaskStateSubmitted, now), mkTask("done1", "c3", a2a.TaskStateWorking, now)} {
		if err := a.PutTask(ctx, "alice", tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := a.PutTask(ctx, "alice", mkTask("done1", "c3", a2a.TaskStateCompleted, now)); err != nil {
		t.Fatal(err)
	}
	if err := b.PutTask(ctx, "alice", mkTask("onB", "c4", a2a.TaskStateWorking, now)); err != nil {
		t.Fatal(err)
	}
	if err := a.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: "run1", ID: "p1", URL: "https://example.com/hook", Token: "sealed"}); err != nil {
		t.Fatal(err)
	}
	if err := a.AppendEvents("run1", seqEvents(1, 2), 0); err != nil {
		t.Fatal(err)
	}
	a.stopInstance() // A dies: its lease is no longer renewed
	if n, err := b.ReapInstances(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("reaped %d, %v before A's lease ended; want 0", n, err)
	}
	if st := mustGet(t, b, "alice", "run1").Status.State; st != a2a.TaskStateWorking {
		t.Fatalf("run1 is %s before A's lease ended", st)
	}
	depth0, _ := b.PushQueueDepth(ctx)
	n, err := b.ReapInstances(ctx, time.Now().Add(1100*time.Millisecond))
	if err != nil || n != 2 {
		t.Fatalf("reaped %d, %v after A's lease; want 2 (run1, sub1)", n, err)
	}
	for _, id := range []string{"run1", "sub1"} {
		got := mustGet(t, b, "alice", id)
		if got.Status.State != a2a.TaskStateFailed || got.Status.Message == nil || got.Status.Message.Parts[0].Text == nil || *got.Status.Message.Parts[0].Text != "crashed" {
			t.Fatalf("%s after the reap: %+v, want FAILED with the crash message", id, got.Status)
		}
	}
	if st := mustGet(t, b, "alice", "done1").Status.State; st != a2a.TaskStateCompleted {
		t.Errorf("a finished task of A became %s", st)
	}
	if st := mustGet(t, b, "alice", "onB").Status.State; st != a2a.TaskStateWorking {
		t.Errorf("B's own running task became %s", st)
	}
	evs, err := b.Events(ctx, "run1", 2)
	if err != nil || len(evs) != 1 || evs[0].Seq != 3 || evs[0].Response.StatusUpdate == nil || evs[0].Response.StatusUpdate.Status.State != a2a.TaskStateFailed {
		t.Fatalf("run1's log after the reap: %+v, %v; want event 3 FAILED", evs, err)
	}
	if depth, _ := b.PushQueueDepth(ctx); depth != depth0+1 {
		t.Errorf("push queue %d → %d; want one FAILED notification queued", depth0, depth)
	}
	// A's turn, alive after all (a pause longer than its lease), writes
	// its final state late: refused, the task stays FAILED (a terminal
	// state is final), on both write paths.
	if err := a.PutTask(ctx, "alice", mkTask("run1", "c1", a2a.TaskStateCompleted, now)); !errors.Is(err, ErrTaskReaped) {
		t.Fatalf("late PutTask of a reaped task: %v; want ErrTaskReaped", err)
	}
	if _, err := a.PutTaskWithJobs(ctx, "alice", mkTask("sub1", "c2", a2a.TaskStateCompleted, now), []byte(`{}`)); !errors.Is(err, ErrTaskReaped) {
		t.Fatalf("late PutTaskWithJobs of a reaped task: %v; want ErrTaskReaped", err)
	}
	if st := mustGet(t, b, "alice", "run1").Status.State; st != a2a.TaskStateFailed {
		t.Fatalf("run1 became %s after a late write", st)
	}
	if depth, _ := b.PushQueueDepth(ctx); depth != depth0+1 {
		t.Errorf("a refused late write queued push jobs (depth %d)", depth)
	}
	// Reaped once: a second pass (or another instance) finds nothing.
	if n, err := b.ReapInstances(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("second reap: %d, %v; want 0", n, err)
	}
}

// TestRedisHeartbeatKeepsInstance (SCALE-2): an instance that renews its
// lease is never reaped, however long it runs.
func TestRedisHeartbeatKeepsInstance(t *testing.T) {
	a := newTestRedis(t)
	ctx := context.Background()
	if err := a.PutTask(ctx, "alice", mkTask("r", "c", a2a.TaskStateWorking, time.Now())); err != nil {
		t.Fatal(err)
	}
	b := sameRedis(t, a)
	score, err := b.c.ZScore(ctx, b.liveKey(), a.InstanceID()).Result()
	if err != nil || time.UnixMilli(int64(score)).Before(time.Now().Add(DefaultInstanceLease/2)) {
		t.Fatalf("A's lease ends at %v (%v); want about %v from now", time.UnixMilli(int64(score)), err, DefaultInstanceLease)
	}
	if n, err := b.ReapInstances(ctx, time.Now()); err != nil || n != 0 {
		t.Fatalf("a live instance was reaped: %d, %v", n, err)
	}
	if st := mustGet(t, b, "alice", "r").Status.State; st != a2a.TaskStateWorking {
		t.Fatalf("a live instance's task became %s", st)
	}
}

// TestRedisFinishReapSparesARenewedInstance (SCALE-2): a reaper drops a
// dead instance's lease entry and running sets, but an instance that
// renewed its lease after the claim keeps both (its sets record the turns
// it runs now).
func TestRedisFinishReapSparesARenewedInstance(t *testing.T) {
	a := newTestRedis(t)
	ctx := context.Background()
	if err := a.PutTask(ctx, "alice", mkTask("r", "c", a2a.TaskStateWorking, time.Now())); err != nil {
		t.Fatal(err)
	}
	a.stopInstance() // the test moves the lease entry by hand
	b := sameRedis(t, a)
	inst := a.InstanceID()
	runKey := a.runKeyFor(inst, "r")
	claimEnd := time.Now().Add(time.Minute).UnixMilli()
	renewed := claimEnd + 5000
	if err := a.c.ZAdd(ctx, a.liveKey(), redis.Z{Score: float64(renewed), Member: inst}).Err(); err != nil {
		t.Fatal(err)
	}
	b.finishReap(ctx, inst, claimEnd)
	if n, _ := a.c.SCard(ctx, runKey).Result(); n != 1 {
		t.Errorf("the running set of an instance that renewed after the claim has %d members, want 1", n)
	}
	if score, err := a.c.ZScore(ctx, a.liveKey(), inst).Result(); err != nil || int64(score) != renewed {
		t.Errorf("the renewed lease entry: %v, %v; want %d", score, err, renewed)
	}
	// Not renewed: the claim's score is still there, both go.
	if err := a.c.ZAdd(ctx, a.liveKey(), redis.Z{Score: float64(claimEnd), Member: inst}).Err(); err != nil {
		t.Fatal(err)
	}
	b.finishReap(ctx, inst, claimEnd)
	if n, _ := a.c.Exists(ctx, runKey).Result(); n != 0 {
		t.Errorf("the running set of a reaped instance was kept")
	}
	if _, err := a.c.ZScore(ctx, a.liveKey(), inst).Result(); !errors.Is(err, redis.Nil) {
		t.Errorf("the lease entry of a reaped instance: %v, want it dropped", err)
	}
}

// TestRedisStaleLeaseRenewedBeforeARunningWrite (SCALE-2): after its
// heartbeat failed for two beats (Redis away), an instance renews its
// lease before a write records a task as running here, so another
// instance's reaper does not fail the new turn before the next beat; a
// write of a finished task sends no renewal.
func TestRedisStaleLeaseRenewedBeforeARunningWrite(t *testing.T) {
	prefix := newTestRedis(t).p
	const lease = time.Hour // its beat (every 20 min) does not run in the test
	a, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + redisAddr(t) + "/0"}, KeyPrefix: prefix, InstanceLease: lease})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	ctx := context.Background()
	lapse := func() time.Time { // the lease as after a long outage
		old := time.Now().Add(-lease)
		if err := a.c.ZAdd(ctx, a.liveKey(), redis.Z{Score: float64(old.UnixMilli()), Member: a.InstanceID()}).Err(); err != nil {
			t.Fatal(err)
		}
		a.inst.renewed.Store(old.UnixMilli())
		return old
	}
	score := func() int64 {
		v, err := a.c.ZScore(ctx, a.liveKey(), a.InstanceID()).Result()
		if err != nil {
			t.Fatal(err)
		}
		return int64(v)
	}
	old := lapse()
	if err := a.PutTask(ctx, "alice", mkTask("done", "c", a2a.TaskStateCompleted, time.Now())); err != nil {
		t.Fatal(err)
	}
	if got := score(); got != old.UnixMilli() {
		t.Errorf("a finished task's write renewed the lease (%d → %d)", old.UnixMilli(), got)
	}
	if err := a.PutTask(ctx, "alice", mkTask("run", "c", a2a.TaskStateWorking, time.Now())); err != nil {
		t.Fatal(err)
	}
	if got := score(); got < time.Now().Add(lease/2).UnixMilli() {
		t.Errorf("after a running task's write the lease ends at %v, want renewed (about %v from now)", time.UnixMilli(got), lease)
	}
	b := sameRedis(t, a)
	if n, err := b.ReapInstances(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("another instance reaped %d (%v) right after the renewal", n, err)
	}
	lapse()
	if _, err := a.PutTaskWithJobs(ctx, "alice", mkTask("run2", "c", a2a.TaskStateSubmitted, time.Now()), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if got := score(); got < time.Now().Add(lease/2).UnixMilli() {
		t.Errorf("after PutTaskWithJobs of a submitted task the lease ends at %v, want renewed", time.UnixMilli(got))
	}
}
