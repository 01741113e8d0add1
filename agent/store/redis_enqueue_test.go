package store

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisJobsQueuedWithTheWrite (SCALE-2, PUSH-5): a task write queues
// one job per push config of the task, built inside the write's script
// from the stored configs, with every field of the config and the
// payload; a config deleted before the write gets none. On both code
// paths (one script; a cluster's task slot then the outbox).
func TestRedisJobsQueuedWithTheWrite(t *testing.T) {
	for _, cluster := range []bool{false, true} {
		name := "standalone"
		if cluster {
			name = "cluster-path"
		}
		t.Run(name, func(t *testing.T) {
			s := newTestRedis(t)
			s.cluster = cluster
			ctx := context.Background()
			now := time.Now()
			if err := s.PutTask(ctx, "alice", mkTask("t1", "c1", a2a.TaskStateWorking, now)); err != nil {
				t.Fatal(err)
			}
			for _, c := range []PushConfig{
				{Owner: "alice", TaskID: "t1", ID: "p1", URL: "https://a.example/hook", Token: "sealed-tok", Scheme: "Bearer", Credentials: "sealed-cred"},
				{Owner: "alice", TaskID: "t1", ID: "odd id{}", URL: "https://b.example/hook"},
				{Owner: "alice", TaskID: "t1", ID: "gone", URL: "https://c.example/hook"},
			} {
				if err := s.PutPushConfig(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.DeletePushConfig(ctx, "alice", "t1", "gone"); err != nil {
				t.Fatal(err)
			}
			payload := []byte(`{"statusUpdate":{"taskId":"t1","status":{"state":"TASK_STATE_COMPLETED"}}}`)
			n, err := s.PutTaskWithJobs(ctx, "alice", mkTask("t1", "c1", a2a.TaskStateCompleted, now), payload)
			if err != nil || n != 2 {
				t.Fatalf("PutTaskWithJobs = %d, %v; want 2 jobs", n, err)
			}
			if got := mustGet(t, s, "alice", "t1").Status.State; got != a2a.TaskStateCompleted {
				t.Fatalf("task state %s", got)
			}
			jobs, err := s.ClaimPushJobs(ctx, time.Now().Add(time.Second), time.Minute, 10)
			if err != nil || len(jobs) != 2 {
				t.Fatalf("claimed %d jobs, %v; want 2", len(jobs), err)
			}
			byCfg := map[string]PushJob{}
			for _, j := range jobs {
				byCfg[j.ConfigID] = j
			}
			p1 := byCfg["p1"]
			if p1.TaskID != "t1" || p1.Owner != "alice" || p1.URL != "https://a.example/hook" || p1.Token != "sealed-tok" ||
				p1.Scheme != "Bearer" || p1.Credentials != "sealed-cred" || string(p1.Payload) != string(payload) || p1.Attempts != 0 || p1.ID == "" {
				t.Fatalf("job of p1: %+v", p1)
			}
			if p1.Due.IsZero() || p1.CreatedAt.IsZero() || time.Since(p1.CreatedAt) > time.Minute {
				t.Fatalf("job times: due %v created %v", p1.Due, p1.CreatedAt)
			}
			if _, ok := byCfg["odd id{}"]; !ok {
				t.Fatalf("no job for the config with an escaped id: %+v", jobs)
			}
			// The config's job set is right: deleting the config drops its
			// pending (here: claimed) delivery from the outbox.
			if err := s.DeletePushConfig(ctx, "alice", "t1", "odd id{}"); err != nil {
				t.Fatal(err)
			}
			if d, _ := s.PushQueueDepth(ctx); d != 1 {
				t.Fatalf("queue depth %d after deleting one config; want 1", d)
			}
			if s.cluster {
				if m, _ := s.c.HLen(ctx, s.pendingJobsKey("t1")).Result(); m != 0 {
					t.Fatalf("%d jobs left pending after a move", m)
				}
			}
		})
	}
}

// TestRedisPendingJobsSurviveAFailedMove (SCALE-2): in a cluster the jobs
// are stored with the task write (the task's slot) and moved to the
// outbox after; when the move fails, they are not lost: the instance's
// heartbeat retries the move, and if the instance dies first, the
// instance that reaps it queues them — exactly once.
func TestRedisPendingJobsSurviveAFailedMove(t *testing.T) {
	addr := "redis://" + redisAddr(t) + "/0"
	prefix := newTestRedis(t).p
	open := func(lease time.Duration) *Redis {
		s, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{addr}, KeyPrefix: prefix, InstanceLease: lease})
		if err != nil {
			t.Fatal(err)
		}
		s.cluster = true
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	ctx := context.Background()
	a := open(time.Hour) // beats by hand below
	b := open(time.Hour)
	now := time.Now()
	for _, id := range []string{"t1", "t2"} {
		if err := a.PutTask(ctx, "alice", mkTask(id, "c-"+id, a2a.TaskStateWorking, now)); err != nil {
			t.Fatal(err)
		}
		if err := a.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: id, ID: "p", URL: "https://a.example/" + id}); err != nil {
			t.Fatal(err)
		}
	}
	// Break the outbox: the move's script fails (WRONGTYPE) after the
	// task write landed.
	breakQueue := func() {
		if err := a.c.Set(ctx, a.queueKey(), "not a sorted set", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	repairQueue := func() { _ = a.c.Del(ctx, a.queueKey()).Err() }
	breakQueue()
	for _, id := range []string{"t1", "t2"} {
		n, err := a.PutTaskWithJobs(ctx, "alice", mkTask(id, "c-"+id, a2a.TaskStateCompleted, now), []byte(`{}`))
		if err != nil || n != 1 {
			t.Fatalf("PutTaskWithJobs(%s) with a broken outbox = %d, %v; want 1 job stored, no error", id, n, err)
		}
	}
	repairQueue()
	if d, _ := a.PushQueueDepth(ctx); d != 0 {
		t.Fatalf("queue depth %d before any retry", d)
	}
	// The heartbeat's retry queues t1's job and t2's; the finished tasks
	// leave the running set.
	a.retryMoves(ctx)
	if d, _ := a.PushQueueDepth(ctx); d != 2 {
		t.Fatalf("queue depth %d after the heartbeat's retry; want 2", d)
	}
	if ok, _ := a.c.SIsMember(ctx, a.runKeyFor(a.inst.id, "t1"), "t1").Result(); ok {
		t.Fatal("a finished task stays in the running set after its jobs were queued")
	}
	jobs, err := a.ClaimPushJobs(ctx, time.Now().Add(time.Second), time.Minute, 10)
	if err != nil || len(jobs) != 2 {
		t.Fatalf("claimed %d, %v", len(jobs), err)
	}
	if err := a.AckPushJobs(ctx, jobs[0].ID, jobs[1].ID); err != nil {
		t.Fatal(err)
	}

	// Now A dies with a job left pending: B's reap queues it, once.
	if err := a.PutTask(ctx, "alice", mkTask("t3", "c3", a2a.TaskStateWorking, now)); err != nil {
		t.Fatal(err)
	}
	if err := a.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: "t3", ID: "p", URL: "https://a.example/t3"}); err != nil {
		t.Fatal(err)
	}
	breakQueue()
	if _, err := a.PutTaskWithJobs(ctx, "alice", mkTask("t3", "c3", a2a.TaskStateCompleted, now), []byte(`{"n":3}`)); err != nil {
		t.Fatal(err)
	}
	repairQueue()
	a.stopInstance()
	if n, err := b.ReapInstances(ctx, time.Now().Add(2*time.Hour)); err != nil || n != 0 {
		t.Fatalf("reap = %d, %v; want 0 tasks failed (t3 finished)", n, err)
	}
	if n, err := b.ReapInstances(ctx, time.Now().Add(4*time.Hour)); err != nil || n != 0 {
		t.Fatalf("second reap = %d, %v", n, err)
	}
	jobs, err = b.ClaimPushJobs(ctx, time.Now().Add(5*time.Hour), time.Minute, 10)
	if err != nil || len(jobs) != 1 || jobs[0].TaskID != "t3" || string(jobs[0].Payload) != `{"n":3}` {
		t.Fatalf("after the reap claimed %+v, %v; want t3's one job", jobs, err)
	}
	if st := mustGet(t, b, "alice", "t3").Status.State; st != a2a.TaskStateCompleted {
		t.Fatalf("t3 became %s", st)
	}
}

// TestRedisReaperDiesHalfway (SCALE-2): a reaper's claim on a dead
// instance expires, so the instance is reaped by another one later;
// before the claim expires nobody else reaps it.
func TestRedisReaperDiesHalfway(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.Now()
	dead := "dead-instance"
	if err := s.c.ZAdd(ctx, s.liveKey(), redis.Z{Score: float64(now.Add(-time.Second).UnixMilli()), Member: dead}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTask(ctx, "alice", mkTask("orphan", "c", a2a.TaskStateWorking, now)); err != nil {
		t.Fatal(err)
	}
	_ = s.c.SRem(ctx, s.runKey(s.inst.id), "orphan").Err()
	if err := s.c.SAdd(ctx, s.runKey(dead), "orphan").Err(); err != nil {
		t.Fatal(err)
	}
	// A reaper claims and "dies" (the claim is taken, nothing done).
	claimEnd := now.Add(time.Minute).UnixMilli()
	if won, err := reapClaimScript.Run(ctx, s.c, []string{s.liveKey()}, dead, now.UnixMilli(), claimEnd).Int(); err != nil || won != 1 {
		t.Fatalf("claim = %d, %v", won, err)
	}
	if n, err := s.ReapInstances(ctx, now.Add(30*time.Second)); err != nil || n != 0 {
		t.Fatalf("reaped %d, %v while another reaper's claim runs", n, err)
	}
	if n, err := s.ReapInstances(ctx, now.Add(2*time.Minute)); err != nil || n != 1 {
		t.Fatalf("reaped %d, %v after the claim ran out; want 1", n, err)
	}
	if st := mustGet(t, s, "alice", "orphan").Status.State; st != a2a.TaskStateFailed {
		t.Fatalf("orphan is %s", st)
	}
	if n, _ := s.c.ZScore(ctx, s.liveKey(), dead).Result(); n != 0 {
		t.Fatalf("the reaped instance is still in the live set (score %v)", n)
	}
}
