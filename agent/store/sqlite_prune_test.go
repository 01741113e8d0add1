package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func pruneTask(id, ctxID string, state a2a.TaskState, at time.Time) *a2a.Task {
	return &a2a.Task{ID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: state, Timestamp: a2a.Timestamp(at)}}
}

// TestSQLitePrune (OPS-5): old terminal and input-required tasks go with
// their push configs in batches; running and recent tasks stay; counts
// (totalSize) follow; idle contexts and old dead letters go; a dry run
// removes nothing.
func TestSQLitePrune(t *testing.T) {
	s := openTest(t, filepath.Join(t.TempDir(), "a2a.db"), SQLiteOptions{})
	testPrune(t, s, func(old, now time.Time) {
		// Two dead letters, one of them old.
		if _, err := s.do(context.Background(), func(w *writer, nowMS int64) (int, error) {
			for i, dead := range []int64{old.UnixMilli(), now.UnixMilli()} {
				if _, err := w.exec(`INSERT INTO push_dead (id, task_id, config_id, owner, url, token, auth_scheme, credentials, payload, attempts, reason, created_ms, dead_ms)
				VALUES (?, 't', 'c', 'alice', 'u', '', '', '', '{}', 1, 'x', ?, ?)`, fmt.Sprintf("d%d", i), dead, dead); err != nil {
					return 0, err
				}
			}
			return 2, nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}

// prunable is a store with retention passes.
type prunable interface {
	FullStore
	Pruner
}

// testPrune is TestSQLitePrune's scenario on any store; addDead adds two
// dead letters, dead at old and at now.
func testPrune(t *testing.T, s prunable, addDead func(old, now time.Time)) {
	ctx := context.Background()
	now := time.Now()
	old, recent := now.Add(-40*24*time.Hour), now.Add(-time.Hour)
	for i := 0; i < 1234; i++ {
		state := a2a.TaskStateCompleted
		if i%2 == 0 {
			state = a2a.TaskStateInputRequired
		}
		if err := s.PutTask(ctx, "alice", pruneTask(fmt.Sprintf("old-%04d", i), "c1", state, old)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range []*a2a.Task{
		pruneTask("old-working", "c1", a2a.TaskStateWorking, old),
		pruneTask("old-submitted", "c2", a2a.TaskStateSubmitted, old),
		pruneTask("recent", "c1", a2a.TaskStateCompleted, recent),
	} {
		if err := s.PutTask(ctx, "alice", tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: "old-0001", ID: "cfg", URL: "https://h.example/x", CreatedAt: old}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []ContextRecord{{Owner: "alice", ID: "c-old", CreatedAt: old, UpdatedAt: old}, {Owner: "alice", ID: "c-new", CreatedAt: recent, UpdatedAt: recent}} {
		if err := s.PutContext(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	addDead(old, now)

	opts := PruneOptions{TasksBefore: now.Add(-30 * 24 * time.Hour), ContextsBefore: now.Add(-7 * 24 * time.Hour), DeadBefore: now.Add(-14 * 24 * time.Hour), Batch: 100, DryRun: true}
	dry, err := s.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if dry.Tasks != 1234 || dry.Contexts != 1 || dry.DeadLetters != 1 {
		t.Fatalf("dry run = %+v, want 1234 tasks, 1 context, 1 dead letter", dry)
	}
	if res, _ := s.ListTasks(ctx, ListQuery{Owner: "alice", Limit: 1}); res.Total != 1237 {
		t.Fatalf("dry run removed tasks: total %d", res.Total)
	}

	opts.DryRun = false
	var batches, ids int
	opts.OnTasks = func(b []string) { batches++; ids += len(b) }
	res, err := s.Prune(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Tasks != 1234 || res.Contexts != 1 || res.DeadLetters != 1 || ids != 1234 || batches < 12 {
		t.Fatalf("prune = %+v, %d ids in %d batches", res, ids, batches)
	}
	all, err := s.ListTasks(ctx, ListQuery{Owner: "alice", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if all.Total != 3 || len(all.Tasks) != 3 {
		t.Fatalf("left %d tasks (total %d), want old-working, old-submitted, recent", len(all.Tasks), all.Total)
	}
	if c, _ := s.ListTasks(ctx, ListQuery{Owner: "alice", State: a2a.TaskStateInputRequired, Limit: 10}); c.Total != 0 {
		t.Errorf("input-required count after prune = %d", c.Total)
	}
	if _, err := s.GetPushConfig(ctx, "alice", "old-0001", "cfg"); err == nil {
		t.Error("the push config of a pruned task is still there")
	}
	if _, err := s.GetContext(ctx, "alice", "c-old"); err == nil {
		t.Error("the idle context is still there")
	}
	if _, err := s.GetContext(ctx, "alice", "c-new"); err != nil {
		t.Errorf("the recent context is gone: %v", err)
	}
	if dl, _ := s.ListDeadPushJobs(ctx, 10); len(dl) != 1 {
		t.Errorf("dead letters left: %d, want 1", len(dl))
	}
	// A second pass finds nothing.
	if again, err := s.Prune(ctx, opts); err != nil || again != (PruneResult{}) {
		t.Errorf("second pass = %+v %v", again, err)
	}
}
