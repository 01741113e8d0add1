package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestPushOutbox covers PUSH-5: jobs are inserted with the state change in
// one transaction (a refused write queues nothing), claimed with a lease in
// one statement, retried, dead-lettered, requeued, and leases released.
func TestPushOutbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a2a.db")
	s, err := OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	task := &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if err := s.PutPushConfig(ctx, PushConfig{Owner: "alice", TaskID: "t1", ID: id, URL: "https://example.com/" + id, Token: "sealed"}); err != nil {
			t.Fatal(err)
		}
	}
	// Another owner cannot take over a config.
	if err := s.PutPushConfig(ctx, PushConfig{Owner: "bob", TaskID: "t1", ID: "a", URL: "https://evil.example/"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign upsert: %v", err)
	}
	// A state change refused (task of another owner) queues no job: no phantom.
	if _, err := s.PutTaskWithJobs(ctx, "bob", task, []byte(`{}`)); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign PutTaskWithJobs: %v", err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 0 {
		t.Fatalf("phantom jobs: %d", n)
	}
	task.Status.State = a2a.TaskStateCompleted
	n, err := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{"statusUpdate":{}}`))
	if err != nil || n != 2 {
		t.Fatalf("PutTaskWithJobs: %d %v", n, err)
	}
	now := time.Now()
	js, err := s.ClaimPushJobs(ctx, now, time.Minute, 10)
	if err != nil || len(js) != 2 || js[0].URL == "" || string(js[0].Payload) != `{"statusUpdate":{}}` || js[0].ID == js[1].ID {
		t.Fatalf("claim: %+v %v", js, err)
	}
	// Leased: a second claim gets nothing until the lease expires.
	if again, _ := s.ClaimPushJobs(ctx, now, time.Minute, 10); len(again) != 0 {
		t.Fatalf("claimed leased jobs: %d", len(again))
	}
	if again, _ := s.ClaimPushJobs(ctx, now.Add(2*time.Minute), time.Minute, 10); len(again) != 2 {
		t.Fatalf("expired leases not reclaimed: %d", len(again))
	}
	if err := s.RetryPushJob(ctx, js[0].ID, 1, now.Add(time.Hour), "receiver answered 503"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeadPushJob(ctx, js[1].ID, 1, "receiver answered 400"); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.ClaimPushJobs(ctx, now.Add(3*time.Minute), time.Minute, 10); len(got) != 0 {
		t.Fatalf("retry claimed before due: %d", len(got))
	}
	got, _ := s.ClaimPushJobs(ctx, now.Add(2*time.Hour), time.Minute, 10)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].LastError != "receiver answered 503" {
		t.Fatalf("due retry: %+v", got)
	}
	dead, err := s.ListDeadPushJobs(ctx, 10)
	if err != nil || len(dead) != 1 || dead[0].ID != js[1].ID || dead[0].Reason != "receiver answered 400" || dead[0].Token != "sealed" {
		t.Fatalf("dead: %+v %v", dead, err)
	}
	if n, err := s.RequeueDeadPushJobs(ctx, js[1].ID); n != 1 || err != nil {
		t.Fatalf("requeue: %d %v", n, err)
	}
	if d, _ := s.ListDeadPushJobs(ctx, 10); len(d) != 0 {
		t.Fatalf("dead after requeue: %d", len(d))
	}
	// Restart: leases left by the dead process are released at once.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenSQLite(path, SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, err := s.ReleasePushLeases(ctx); err != nil || n != 1 {
		t.Fatalf("release: %d %v", n, err)
	}
	got, _ = s.ClaimPushJobs(ctx, now.Add(2*time.Hour), time.Minute, 10) // the retry is due in 1h
	if len(got) != 2 {
		t.Fatalf("after restart: %d claimable, want 2", len(got))
	}
	if err := s.AckPushJobs(ctx, got[0].ID, got[1].ID); err != nil {
		t.Fatal(err)
	}
	// Deleting a config drops its pending jobs; a missing one is fine.
	task.Status.State = a2a.TaskStateInputRequired
	if n, _ := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{}`)); n != 2 {
		t.Fatalf("jobs: %d", n)
	}
	if err := s.DeletePushConfig(ctx, "alice", "t1", "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePushConfig(ctx, "alice", "t1", "a"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 1 {
		t.Fatalf("depth after delete: %d", n)
	}
	// FailInterrupted notifies too.
	task.Status.State = a2a.TaskStateWorking
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.FailInterrupted(ctx, "stopped", time.Now()); n != 1 {
		t.Fatalf("FailInterrupted: %d", n)
	}
	if n, _ := s.PushQueueDepth(ctx); n != 2 {
		t.Fatalf("depth after FailInterrupted: %d, want 2", n)
	}
}
