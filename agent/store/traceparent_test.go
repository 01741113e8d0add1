package store

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// testTurn is the span context of a producing turn.
var testTurn = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
	SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
	TraceFlags: trace.FlagsSampled,
})

const testTraceParent = "00-0102030405060708090a0b0c0d0e0f10-0102030405060708-01"

// TestPushJobTraceParent (issue 28): a job keeps the W3C traceparent of
// the span in the ctx of the write that queued it, through a dead letter
// and its requeue; an untraced write queues jobs without one.
func TestPushJobTraceParent(t *testing.T) {
	eachStore(t, func(t *testing.T, s FullStore) {
		ctx := context.Background()
		traced := trace.ContextWithSpanContext(ctx, testTurn)
		for _, id := range []string{"t1", "t2"} {
			if err := s.PutTask(ctx, "alice", &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); err != nil {
				t.Fatal(err)
			}
			if err := s.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: id, ID: "cfg", URL: "https://example.com/h", Token: "sealed"}); err != nil {
				t.Fatal(err)
			}
		}
		done := func(id string) *a2a.Task {
			return &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
		}
		if n, err := s.PutTaskWithJobs(traced, "alice", done("t1"), []byte(`{}`)); err != nil || n != 1 {
			t.Fatalf("PutTaskWithJobs: %d %v", n, err)
		}
		if n, err := s.PutTaskWithJobs(ctx, "alice", done("t2"), []byte(`{}`)); err != nil || n != 1 {
			t.Fatalf("PutTaskWithJobs: %d %v", n, err)
		}
		got := claimTraceParents(t, s)
		if got["t1"] != testTraceParent || got["t2"] != "" {
			t.Fatalf("claimed traceparents %q", got)
		}
		js, _ := s.ClaimPushJobs(ctx, time.Now().Add(time.Hour), time.Minute, 10)
		for _, j := range js {
			if err := s.DeadPushJob(ctx, j.ID, 3, "gone"); err != nil {
				t.Fatal(err)
			}
		}
		ds, err := s.ListDeadPushJobs(ctx, 10)
		if err != nil || len(ds) != 2 {
			t.Fatalf("dead: %+v %v", ds, err)
		}
		for _, d := range ds {
			if want := map[string]string{"t1": testTraceParent}[d.TaskID]; d.TraceParent != want {
				t.Errorf("dead letter of %s: traceparent %q", d.TaskID, d.TraceParent)
			}
		}
		if n, err := s.RequeueDeadPushJobs(ctx, ""); err != nil || n != 2 {
			t.Fatalf("requeue: %d %v", n, err)
		}
		if got := claimTraceParents(t, s); got["t1"] != testTraceParent || got["t2"] != "" {
			t.Fatalf("requeued traceparents %q", got)
		}
	})
}

// claimTraceParents claims every due job and returns its traceparent by task.
func claimTraceParents(t *testing.T, s FullStore) map[string]string {
	t.Helper()
	js, err := s.ClaimPushJobs(context.Background(), time.Now().Add(time.Second), time.Millisecond, 10)
	if err != nil || len(js) != 2 {
		t.Fatalf("claim: %+v %v", js, err)
	}
	out := map[string]string{}
	for _, j := range js {
		out[j.TaskID] = j.TraceParent
	}
	return out
}

// TestMigration5KeepsQueuedJobs: a job queued by a version 4 database
// (no traceparent column) is claimed after the migration, with none.
func TestMigration5KeepsQueuedJobs(t *testing.T) {
	path := t.TempDir() + "/a2a.db"
	func() {
		saved, savedV := migrations, schemaVersion
		migrations, schemaVersion = migrations[:4], 4
		defer func() { migrations, schemaVersion = saved, savedV }()
		s, err := OpenSQLite(path, SQLiteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// Written as the version 4 code did: no traceparent column.
		if _, err := s.w.conn.ExecContext(bg, `INSERT INTO push_jobs (id, task_id, config_id, owner, url, token, auth_scheme,
credentials, payload, attempts, due_ms, lease_until, last_error, created_ms) VALUES ('j1', 't1', 'cfg', 'alice', 'https://example.com/h', 'sealed', '', '', '{}', 0, 0, 0, '', 1)`); err != nil {
			t.Fatal(err)
		}
	}()
	s := openTest(t, path, SQLiteOptions{})
	js, err := s.ClaimPushJobs(bg, time.Now(), time.Minute, 10)
	if err != nil || len(js) != 1 || js[0].ID != "j1" || js[0].TraceParent != "" {
		t.Fatalf("claim after migration: %+v %v", js, err)
	}
}
