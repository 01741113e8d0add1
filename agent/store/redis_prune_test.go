package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisPrune (OPS-5): the SQLite retention scenario on the Redis
// store — standalone, the cluster code path and a real cluster — with the
// task's keys, index entries and pending deliveries removed, and a pass
// skipped while another instance holds the prune lock.
func TestRedisPrune(t *testing.T) {
	eachStore(t, func(t *testing.T, fs FullStore) {
		s, ok := fs.(*Redis)
		if !ok {
			return // TestSQLitePrune
		}
		runRedisPrune(t, s)
	})
}

// runRedisPrune is TestRedisPrune on one Redis store.
func runRedisPrune(t *testing.T, s *Redis) {
	ctx := context.Background()
	testPrune(t, s, func(old, now time.Time) {
		// Two dead letters (of bob's task), one of them old.
		if err := s.PutTask(ctx, "bob", mkTask("dl", "c", a2a.TaskStateWorking, now)); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"p0", "p1"} {
			if err := s.PutPushConfig(ctx, PushConfig{Owner: "bob", TaskID: "dl", ID: id, URL: "https://h.example/" + id}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.PutTaskWithJobs(ctx, "bob", mkTask("dl", "c", a2a.TaskStateCompleted, now), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		jobs, err := s.ClaimPushJobs(ctx, time.Now().Add(time.Second), time.Minute, 10)
		if err != nil || len(jobs) != 2 {
			t.Fatalf("claim: %d %v", len(jobs), err)
		}
		for _, j := range jobs {
			if err := s.DeadPushJob(ctx, j.ID, 3, "gone"); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.c.ZAdd(ctx, s.deadKey(), redis.Z{Score: float64(old.UnixMilli()), Member: jobs[0].ID}).Err(); err != nil {
			t.Fatal(err)
		}
	})
	// Nothing of a pruned task is left: no record, log or index entry.
	for _, k := range []string{s.taskKey("old-0001"), s.pushCfgKey("old-0001"), s.eventsKey("old-0001")} {
		if n, _ := s.c.Exists(ctx, k).Result(); n != 0 {
			t.Errorf("key %s of a pruned task is left", k)
		}
	}
	if ok, _ := s.c.HExists(ctx, s.ownerIx("alice"), "old-0001").Result(); ok {
		t.Error("the owner index still holds a pruned task")
	}
	// Another instance's pass holds the lock: this one does nothing.
	if err := s.PutTask(ctx, "alice", mkTask("old-later", "c1", a2a.TaskStateCompleted, time.Now().Add(-60*24*time.Hour))); err != nil {
		t.Fatal(err)
	}
	if err := s.c.Set(ctx, s.pruneLockKey(), "other", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	opts := PruneOptions{TasksBefore: time.Now().Add(-30 * 24 * time.Hour)}
	if res, err := s.Prune(ctx, opts); err != nil || res.Tasks != 0 {
		t.Fatalf("prune while another instance prunes = %+v, %v; want nothing", res, err)
	}
	_ = s.c.Del(ctx, s.pruneLockKey()).Err()
	if res, err := s.Prune(ctx, opts); err != nil || res.Tasks != 1 {
		t.Fatalf("prune after the lock = %+v, %v; want 1 task", res, err)
	}
	if n, _ := s.c.Exists(ctx, s.pruneLockKey()).Result(); n != 0 {
		t.Error("the prune lock outlived the pass")
	}
}

// TestRedisPrunedTasksReachEveryInstance (OPS-5): the instance whose pass
// pruned tasks publishes their ids; another instance's pass — even one
// skipped because the first holds the lock — hands them to its OnTasks
// (its local input files), once.
func TestRedisPrunedTasksReachEveryInstance(t *testing.T) {
	ctx := context.Background()
	a := newTestRedis(t)
	b := sameRedis(t, a)
	old := time.Now().Add(-60 * 24 * time.Hour)
	for _, id := range []string{"x1", "x2", "x3"} {
		if err := a.PutTask(ctx, "alice", mkTask(id, "c", a2a.TaskStateCompleted, old)); err != nil {
			t.Fatal(err)
		}
	}
	var onA []string
	opts := PruneOptions{TasksBefore: time.Now().Add(-30 * 24 * time.Hour), Batch: 2}
	opts.OnTasks = func(ids []string) { onA = append(onA, ids...) }
	if res, err := a.Prune(ctx, opts); err != nil || res.Tasks != 3 || len(onA) != 3 {
		t.Fatalf("A's pass = %+v, %v, OnTasks got %v", res, err, onA)
	}
	if err := a.c.Set(ctx, a.pruneLockKey(), "a-again", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	var onB []string
	opts.OnTasks = func(ids []string) { onB = append(onB, ids...) }
	if _, err := b.Prune(ctx, opts); err != nil || len(onB) != 3 {
		t.Fatalf("B's skipped pass handed %v, %v; want A's three pruned ids", onB, err)
	}
	onB = nil
	if _, err := b.Prune(ctx, opts); err != nil || len(onB) != 0 {
		t.Fatalf("B's next pass handed %v again", onB)
	}
}

// TestRedisPruneSharedArtifacts (OPS-5, SCALE-1): artifact payloads in
// Redis that no turn stored since the task cut-off are removed; one
// stored again recently (a reuse) stays; a dry run removes nothing.
func TestRedisPruneSharedArtifacts(t *testing.T) {
	ctx := context.Background()
	s := newTestRedis(t)
	for _, sha := range []string{"aa", "bb"} {
		if err := s.PutBlob(ctx, sha, []byte("payload "+sha)); err != nil {
			t.Fatal(err)
		}
	}
	// "aa" was last stored 40 days ago; "bb" now.
	if err := s.c.ZAdd(ctx, s.blobUseKey(), redis.Z{Score: float64(time.Now().Add(-40 * 24 * time.Hour).UnixMilli()), Member: "aa"}).Err(); err != nil {
		t.Fatal(err)
	}
	opts := PruneOptions{TasksBefore: time.Now().Add(-30 * 24 * time.Hour), DryRun: true}
	if res, err := s.Prune(ctx, opts); err != nil || res.SharedArtifacts != 1 {
		t.Fatalf("dry run = %+v, %v; want 1 payload", res, err)
	}
	if _, err := s.GetBlob(ctx, "aa"); err != nil {
		t.Fatalf("a dry run removed a payload: %v", err)
	}
	opts.DryRun = false
	if res, err := s.Prune(ctx, opts); err != nil || res.SharedArtifacts != 1 {
		t.Fatalf("prune = %+v, %v; want 1 payload", res, err)
	}
	if _, err := s.GetBlob(ctx, "aa"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the unused payload is still there: %v", err)
	}
	if b, err := s.GetBlob(ctx, "bb"); err != nil || string(b) != "payload bb" {
		t.Fatalf("the used payload: %q %v", b, err)
	}
	// Stored again: used again, kept by the next pass.
	if err := s.PutBlob(ctx, "bb", []byte("payload bb")); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Prune(ctx, opts); err != nil || res.SharedArtifacts != 0 {
		t.Fatalf("second prune = %+v, %v", res, err)
	}
}
