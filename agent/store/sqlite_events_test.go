package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// logEvent is a status update that survives a JSON round trip.
func logEvent(text string) a2a.StreamResponse {
	return a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: a2a.TaskStateWorking,
		Message: &a2a.Message{MessageID: text, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(text)}}}}}
}

func seqEvents(from, to uint64) []Event {
	var out []Event
	for i := from; i <= to; i++ {
		out = append(out, Event{Seq: i, Response: logEvent(fmt.Sprint("e", i))})
	}
	return out
}

func eventSeqs(evs []Event) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}

// RPC-17, SQLite specifics (the store-generic semantics are
// TestEventLogConformance): appended events are readable at once
// (pending), written with the task's next write, pruned to keep rows, not
// written by a refused write, and dropped with the task.
func TestSQLiteEventLog(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	task := &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if n, err := s.LastEventSeq(ctx, "t1"); err != nil || n != 0 {
		t.Fatalf("LastEventSeq of a task without events = %d, %v", n, err)
	}
	if err := s.AppendEvents("t1", seqEvents(1, 3), 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.LastEventSeq(ctx, "t1"); n != 3 {
		t.Errorf("LastEventSeq with pending events = %d, want 3", n)
	}
	if evs, err := s.Events(ctx, "t1", 1); err != nil || fmt.Sprint(eventSeqs(evs)) != "[2 3]" {
		t.Errorf("Events(1) with pending events = %v, %v; want [2 3]", eventSeqs(evs), err)
	}
	// Nothing is in the table before the task is written.
	var rows int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't1'`).Scan(&rows); err != nil || rows != 0 {
		t.Fatalf("events table holds %d rows before the task write (%v), want 0", rows, err)
	}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't1'`).Scan(&rows); err != nil || rows != 3 {
		t.Fatalf("events table holds %d rows after the task write (%v), want 3", rows, err)
	}
	// More than keep: the log keeps the last 5.
	if err := s.AppendEvents("t1", seqEvents(4, 8), 5); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't1'`).Scan(&rows); err != nil || rows != 5 {
		t.Errorf("events table holds %d rows after pruning (%v), want 5", rows, err)
	}
	if n, _ := s.LastEventSeq(ctx, "t1"); n != 8 {
		t.Errorf("LastEventSeq from the table = %d, want 8", n)
	}
	// A write of another owner's task with the same id writes no events.
	_ = s.AppendEvents("t1", seqEvents(9, 9), 5)
	if err := s.PutTask(ctx, "mallory", task); !errors.Is(err, ErrNotFound) {
		t.Fatalf("PutTask of another owner: %v", err)
	}
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't1' AND seq = 9`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("another owner's task write stored an event (%d rows, %v)", rows, err)
	}
	// Pruned with the task.
	if _, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		n, err := w.exec(`DELETE FROM tasks WHERE id = 't1'`)
		return int(n), err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't1'`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("events of a deleted task remain: %d rows (%v)", rows, err)
	}
}

// TestStoredBusUnwatchedTurn (RPC-17): a turn nobody subscribed to stores
// only the event that ends it, so the numbering goes on across turns and
// a replay from inside it is ErrEventsGone (a snapshot), never a gap.
func TestStoredBusUnwatchedTurn(t *testing.T) {
	s, _ := newTestStore(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bus := NewStoredBus(s)
	turn, _ := bus.Open("t3", LogOptions{})
	turn.Publish(logEvent("working"))
	turn.Publish(logEvent("chunk"))
	end := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t3", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}}
	if seq := turn.Publish(end); seq != 3 {
		t.Fatalf("end event numbered %d", seq)
	}
	turn.Close()
	if err := s.PutTask(ctx, "alice", &a2a.Task{ID: "t3", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}); err != nil {
		t.Fatal(err)
	}
	if last, err := s.LastEventSeq(ctx, "t3"); err != nil || last != 3 {
		t.Fatalf("LastEventSeq = %d %v, want 3", last, err)
	}
	var rows int
	if err := s.rdb.QueryRow(`SELECT COUNT(*) FROM task_events WHERE task_id = 't3'`).Scan(&rows); err != nil || rows != 1 {
		t.Errorf("an unwatched turn stored %d events (%v), want 1", rows, err)
	}
	if _, err := s.Events(ctx, "t3", 1); !errors.Is(err, ErrEventsGone) {
		t.Errorf("replay from inside an unwatched turn: %v, want ErrEventsGone", err)
	}
	if evs, err := s.Events(ctx, "t3", 2); err != nil || len(evs) != 1 || evs[0].Seq != 3 {
		t.Errorf("replay of the end event: %v %v", evs, err)
	}
}

// RPC-17, RPC-12: FailInterrupted logs the FAILED status update after the
// task's last stored event, so a stream resumed after a crash ends with it.
func TestFailInterruptedLogsEvent(t *testing.T) {
	s, _ := newTestStore(t)
	ctx := context.Background()
	task := &a2a.Task{ID: "t3", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	_ = s.AppendEvents("t3", seqEvents(1, 2), 10)
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if n, err := s.FailInterrupted(ctx, "the gateway stopped", time.Now()); err != nil || n != 1 {
		t.Fatalf("FailInterrupted: %d, %v", n, err)
	}
	evs, err := s.Events(ctx, "t3", 2)
	if err != nil || len(evs) != 1 || evs[0].Seq != 3 || evs[0].Response.StatusUpdate == nil ||
		evs[0].Response.StatusUpdate.Status.State != a2a.TaskStateFailed || evs[0].Response.StatusUpdate.TaskID != "t3" {
		t.Fatalf("events after 2: %+v, %v; want the FAILED update at 3", evs, err)
	}
}
