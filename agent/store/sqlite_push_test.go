package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
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

// TestPushConfigMax covers the PUSH-1 cap: a new id beyond the cap is
// refused, replacing an existing id does not count twice, other tasks have
// their own count, and concurrent creates (group-committed together)
// never exceed the cap.
func TestPushConfigMax(t *testing.T) { eachStore(t, testPushConfigMax) }

func testPushConfigMax(t *testing.T, s FullStore) {
	ctx := context.Background()
	for _, id := range []string{"t1", "t2", "t3"} {
		if err := s.PutTask(ctx, "alice", &a2a.Task{ID: id, ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}); err != nil {
			t.Fatal(err)
		}
	}
	put := func(task, id string) error {
		return s.PutPushConfigMax(ctx, PushConfig{Owner: "alice", TaskID: task, ID: id, URL: "https://example.com/" + id}, 3)
	}
	for _, id := range []string{"a", "b", "c"} {
		if err := put("t1", id); err != nil {
			t.Fatalf("config %s: %v", id, err)
		}
	}
	if err := put("t1", "d"); !errors.Is(err, ErrPushConfigLimit) {
		t.Fatalf("fourth config: %v, want ErrPushConfigLimit", err)
	}
	if err := put("t1", "b"); err != nil {
		t.Fatalf("replacing an existing id at the cap: %v", err)
	}
	if err := put("t2", "a"); err != nil {
		t.Fatalf("another task's first config: %v", err)
	}
	// A foreign owner replacing an id is still ErrNotFound, not a cap error.
	if err := s.PutPushConfigMax(ctx, PushConfig{Owner: "bob", TaskID: "t1", ID: "a", URL: "https://evil.example/"}, 3); !errors.Is(err, ErrNotFound) {
		t.Fatalf("foreign upsert at the cap: %v", err)
	}
	if cs, _ := s.ListPushConfigs(ctx, "alice", "t1", "", 100); len(cs) != 3 {
		t.Fatalf("t1 has %d configs, want 3", len(cs))
	}

	// 40 concurrent creates of distinct ids on t3 with a cap of 10.
	const n, capN = 40, 10
	var wg sync.WaitGroup
	var ok, limited atomic.Int64
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.PutPushConfigMax(ctx, PushConfig{Owner: "alice", TaskID: "t3", ID: fmt.Sprintf("c%02d", i), URL: "https://example.com/"}, capN)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, ErrPushConfigLimit):
				limited.Add(1)
			default:
				t.Errorf("create %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	cs, err := s.ListPushConfigs(ctx, "alice", "t3", "", 100)
	if err != nil || len(cs) != capN || ok.Load() != capN || limited.Load() != n-capN {
		t.Fatalf("concurrent creates: stored %d (%v), ok %d, limited %d; want %d stored", len(cs), err, ok.Load(), limited.Load(), capN)
	}
}
