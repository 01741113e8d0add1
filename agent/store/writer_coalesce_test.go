package store

import (
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// stallWriter makes the writer wait inside a transaction until the
// returned release is called, so the writes queued meanwhile form one batch.
func stallWriter(t *testing.T, s *SQLite) (release func()) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := s.do(bg, func(*writer, int64) (int, error) {
			close(entered)
			<-gate
			return 0, nil
		})
		done <- err
	}()
	<-entered
	return func() {
		close(gate)
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func stateEvent(id, ctxID string, st a2a.TaskState) a2a.StreamResponse {
	return a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: a2a.TaskStatus{State: st}}}
}

// A queued SUBMITTED write superseded by the turn's final write in the same
// batch is not written, yet the task, its events (RPC-17, in order) and the
// counts are exactly those of the two writes applied one after the other.
func TestCoalesceQueuedTaskWrite(t *testing.T) {
	t.Run("coalesced", func(t *testing.T) { testCoalesce(t, false) })
	t.Run("another owner in between", func(t *testing.T) { testCoalesce(t, true) })
}

func testCoalesce(t *testing.T, intruder bool) {
	s, _ := newTestStore(t)
	mustPut(t, s, "o", mkTask("other", "c1", a2a.TaskStateCompleted, t0))
	release := stallWriter(t, s)

	sub := mkTask("t1", "c1", a2a.TaskStateSubmitted, t0)
	if err := s.AppendEvents("t1", []Event{{Seq: 1, Response: a2a.StreamResponse{Task: sub}}}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTaskNoWait("o", sub); err != nil {
		t.Fatal(err)
	}
	// A sent message record in between touches no task.
	if err := s.recordSent(&s.sent, "k", &sentClaim{ready: make(chan struct{})}, SentMessage{Owner: "o", MessageID: "m", TaskID: "t1", At: t0}, t0); err != nil {
		t.Fatal(err)
	}
	if intruder {
		// A queued write of the id by another owner in between: merging
		// across it would let it create the task.
		if err := s.PutTaskNoWait("intruder", mkTask("t1", "cX", a2a.TaskStateWorking, t0)); err != nil {
			t.Fatal(err)
		}
	}
	final := mkTask("t1", "c1", a2a.TaskStateInputRequired, t0.Add(time.Second))
	if err := s.AppendEvents("t1", []Event{
		{Seq: 2, Response: stateEvent("t1", "c1", a2a.TaskStateWorking)},
		{Seq: 3, Response: stateEvent("t1", "c1", a2a.TaskStateInputRequired)},
	}, 0); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := s.PutTask(bg, "o", final); err != nil {
			t.Error(err)
		}
	}()
	queued := 2
	// A sent message record in between touches no task.
	if err := s.recordSent(&s.sent, "k", &sentClaim{ready: make(chan struct{})}, SentMessage{Owner: "o", MessageID: "m", TaskID: "t1", At: t0}, t0); err != nil {
		t.Fatal(err)
	}
	if intruder {
		queued = 3
	}
	for s.events.snapshot("t1") != nil || len(s.w.reqs) < queued {
		time.Sleep(time.Millisecond) // until the final write is queued
	}
	release()
	wg.Wait()

	if n, want := s.w.nCoalesced.Load(), map[bool]int64{false: 1, true: 0}[intruder]; n != want {
		t.Fatalf("coalesced %d writes, want %d", n, want)
	}
	if got := mustGet(t, s, "o", "t1"); got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("task after the batch: %+v", got.Status)
	}
	evs, err := s.Events(bg, "t1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 || evs[0].Seq != 1 || evs[0].Response.Task == nil || evs[2].Seq != 3 ||
		evs[2].Response.StatusUpdate.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("events: %+v", evs)
	}
	checkTotals(t, s, map[string]*model{
		"other": {owner: "o", ctx: "c1", state: a2a.TaskStateCompleted, id: "other"},
		"t1":    {owner: "o", ctx: "c1", state: a2a.TaskStateInputRequired, id: "t1"},
	})
	if res := mustList(t, s, ListQuery{Owner: "intruder", Limit: 10}); res.Total != 0 || len(res.Tasks) != 0 {
		t.Fatalf("intruder's tasks: %+v", res)
	}
}

// A write of another kind between two writes of a task (it may read the
// task inside the transaction) keeps the first one.
func TestCoalesceStopsAtOtherWrites(t *testing.T) {
	s, _ := newTestStore(t)
	release := stallWriter(t, s)
	if err := s.PutTaskNoWait("o", mkTask("t1", "c1", a2a.TaskStateSubmitted, t0)); err != nil {
		t.Fatal(err)
	}
	seen := make(chan a2a.TaskState, 1)
	go func() {
		_, err := s.do(bg, func(w *writer, _ int64) (int, error) {
			var st string
			err := w.conn.QueryRowContext(bg, `SELECT state FROM tasks WHERE id = 't1'`).Scan(&st)
			seen <- a2a.TaskState(st)
			return 0, err
		})
		if err != nil {
			t.Error(err)
		}
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for len(s.w.reqs) < 2 {
			time.Sleep(time.Millisecond)
		}
		mustPut(t, s, "o", mkTask("t1", "c1", a2a.TaskStateCompleted, t0.Add(time.Second)))
	}()
	for len(s.w.reqs) < 3 {
		time.Sleep(time.Millisecond)
	}
	release()
	wg.Wait()
	if st := <-seen; st != a2a.TaskStateSubmitted {
		t.Fatalf("the write in between saw state %q, want SUBMITTED", st)
	}
	if n := s.w.nCoalesced.Load(); n != 0 {
		t.Fatalf("coalesced %d writes across another write", n)
	}
	if got := mustGet(t, s, "o", "t1"); got.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("task: %+v", got.Status)
	}
}
