package agent

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// recordingStore is a SQLite store that records the state of every task
// write it is asked for, queued or waited for.
type recordingStore struct {
	*store.SQLite
	mu     sync.Mutex
	states []a2a.TaskState
}

func (s *recordingStore) record(t *a2a.Task) {
	s.mu.Lock()
	s.states = append(s.states, t.Status.State)
	s.mu.Unlock()
}

func (s *recordingStore) PutTask(ctx context.Context, owner string, t *a2a.Task) error {
	s.record(t)
	return s.SQLite.PutTask(ctx, owner, t)
}

func (s *recordingStore) PutTaskNoWait(owner string, t *a2a.Task) error {
	s.record(t)
	return s.SQLite.PutTaskNoWait(owner, t)
}

func (s *recordingStore) written() []a2a.TaskState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.states)
}

func newRecordingService(t *testing.T, b backend.Backend) (*Service, *recordingStore) {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rs := &recordingStore{SQLite: st}
	hub, err := NewHub(context.Background(), rs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close(); _ = st.Close() })
	return NewService(hub, Config{Backend: b}), rs
}

// drain reads a stream to its end and returns the last event's state.
func drain(t *testing.T, st Stream) a2a.TaskState {
	t.Helper()
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last a2a.TaskState
	for {
		ev, ok := st.Next(ctx)
		if !ok {
			return last
		}
		last = eventState(ev)
	}
}

// TestQuickStreamedTurnWritesNoWorkingState: a streamed turn that ends
// before lazyWriteDelay stores its task twice — SUBMITTED before the
// caller hears of it, then its final state — and never the intermediate
// WORKING state (issue 17: one task write fewer per quick stream).
func TestQuickStreamedTurnWritesNoWorkingState(t *testing.T) {
	svc, rs := newRecordingService(t, backend.EchoBackend{Chunks: 3})
	st, err := svc.SendStreamingMessage(context.Background(), Call{Principal: "alice"}, sendReq(msg("quick")))
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, st); got != a2a.TaskStateInputRequired {
		t.Fatalf("stream ended in %s", got)
	}
	time.Sleep(2 * lazyWriteDelay) // a timer that should not have fired
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateInputRequired}
	if got := rs.written(); !slices.Equal(got, want) {
		t.Fatalf("task writes %v, want %v", got, want)
	}
}

// TestLongStreamedTurnStoresWorking: a streamed turn still running after
// lazyWriteDelay has its WORKING state stored while it runs (listings and
// a restart see it working), and its final state when it ends.
func TestLongStreamedTurnStoresWorking(t *testing.T) {
	svc, rs := newRecordingService(t, backend.EchoBackend{Chunks: 1, Delay: 3 * lazyWriteDelay})
	st, err := svc.SendStreamingMessage(context.Background(), Call{Principal: "alice"}, sendReq(msg("slow")))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, ok := st.Next(ctx)
	if !ok || first.Task == nil {
		t.Fatalf("first event %+v", first)
	}
	id := first.Task.ID
	deadline := time.Now().Add(5 * time.Second)
	for {
		stored, err := rs.SQLite.GetTask(ctx, "alice", id)
		if err == nil && stored.Status.State == a2a.TaskStateWorking {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored task never WORKING while the turn ran (last: %+v, %v)", stored, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := drain(t, st); got != a2a.TaskStateInputRequired {
		t.Fatalf("stream ended in %s", got)
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired}
	if got := rs.written(); !slices.Equal(got, want) {
		t.Fatalf("task writes %v, want %v", got, want)
	}
}
