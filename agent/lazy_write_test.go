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

// Capabilities are the SQLite store's, with the recording writes.
func (s *recordingStore) Capabilities() store.Capabilities {
	c := s.SQLite.Capabilities()
	c.Store, c.NoWait = s, s
	return c
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

// TestStreamedTurnWritesWorkingAtOnce: a streamed turn's caller knows the
// task before it ends, so its WORKING state is queued for the store as
// soon as the turn starts — even for a turn that ends long before
// lazyWriteDelay — and listings never say SUBMITTED while GetTask says
// WORKING. Its writes are SUBMITTED (durable, before the first event),
// WORKING, then the final state.
func TestStreamedTurnWritesWorkingAtOnce(t *testing.T) {
	svc, rs := newRecordingService(t, backend.EchoBackend{Chunks: 3})
	st, err := svc.SendStreamingMessage(context.Background(), Call{Principal: "alice"}, sendReq(msg("quick")))
	if err != nil {
		t.Fatal(err)
	}
	if got := drain(t, st); got != a2a.TaskStateInputRequired {
		t.Fatalf("stream ended in %s", got)
	}
	want := []a2a.TaskState{a2a.TaskStateSubmitted, a2a.TaskStateWorking, a2a.TaskStateInputRequired}
	if got := rs.written(); !slices.Equal(got, want) {
		t.Fatalf("task writes %v, want %v", got, want)
	}
}

// TestBlockingQuickTurnWritesOnce: a blocking SendMessage whose turn ends
// before lazyWriteDelay stores its task once, in its final state (nobody
// could have asked for it before).
func TestBlockingQuickTurnWritesOnce(t *testing.T) {
	svc, rs := newRecordingService(t, backend.EchoBackend{Chunks: 3})
	res, err := svc.SendMessage(context.Background(), Call{Principal: "alice"}, sendReq(msg("quick")))
	if err != nil || res.Task == nil {
		t.Fatalf("SendMessage: %v %+v", err, res)
	}
	time.Sleep(2 * lazyWriteDelay) // sleep: a lazy-write timer that must not fire after the end
	want := []a2a.TaskState{a2a.TaskStateInputRequired}
	if got := rs.written(); !slices.Equal(got, want) {
		t.Fatalf("task writes %v, want %v", got, want)
	}
}

// TestLongStreamedTurnStoresWorking: a streamed turn has its WORKING
// state stored while it runs (listings and a restart see it working), and
// its final state when it ends.
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
