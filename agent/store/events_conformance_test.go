package store

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The EventStore (RPC-17) and SentMessageStore (RPC-18) conformance
// tests, over every store implementation (eachStore).

func eventStoreOf(t *testing.T, s FullStore) EventStore {
	t.Helper()
	es, ok := s.(EventStore)
	if !ok {
		t.Fatalf("%T does not implement EventStore", s)
	}
	return es
}

func sentStoreOf(t *testing.T, s FullStore) SentMessageStore {
	t.Helper()
	ss, ok := s.(SentMessageStore)
	if !ok {
		t.Fatalf("%T does not implement SentMessageStore", s)
	}
	return ss
}

// TestEventLogConformance (RPC-17): appended events are readable at once,
// bounded at keep per task, replayed after a seq in order with their
// bodies; an after whose next event is not held is ErrEventsGone; logs of
// different tasks are apart.
func TestEventLogConformance(t *testing.T) { eachStore(t, testEventLog) }

func testEventLog(t *testing.T, s FullStore) {
	es := eventStoreOf(t, s)
	ctx := context.Background()
	task := &a2a.Task{ID: "t1", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	if n, err := es.LastEventSeq(ctx, "t1"); err != nil || n != 0 {
		t.Fatalf("LastEventSeq of a task without events = %d, %v", n, err)
	}
	if evs, err := es.Events(ctx, "t1", 0); err != nil || len(evs) != 0 {
		t.Fatalf("Events(0) of a task without events = %v, %v; want none", eventSeqs(evs), err)
	}
	if _, err := es.Events(ctx, "t1", 4); !errors.Is(err, ErrEventsGone) {
		t.Fatalf("Events(4) of a task without events = %v, want ErrEventsGone", err)
	}
	if err := es.AppendEvents("t1", seqEvents(1, 3), 5); err != nil {
		t.Fatal(err)
	}
	if n, _ := es.LastEventSeq(ctx, "t1"); n != 3 {
		t.Errorf("LastEventSeq = %d, want 3", n)
	}
	if evs, err := es.Events(ctx, "t1", 1); err != nil || fmt.Sprint(eventSeqs(evs)) != "[2 3]" {
		t.Errorf("Events(1) = %v, %v; want [2 3]", eventSeqs(evs), err)
	}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	// More than keep, in two appends: the log keeps the last 5.
	if err := es.AppendEvents("t1", seqEvents(4, 6), 5); err != nil {
		t.Fatal(err)
	}
	if err := es.AppendEvents("t1", seqEvents(7, 8), 5); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	if evs, err := es.Events(ctx, "t1", 3); err != nil || fmt.Sprint(eventSeqs(evs)) != "[4 5 6 7 8]" {
		t.Errorf("Events(3) = %v, %v; want [4 5 6 7 8]", eventSeqs(evs), err)
	}
	evs, err := es.Events(ctx, "t1", 6)
	if err != nil || fmt.Sprint(eventSeqs(evs)) != "[7 8]" || evs[0].Response.StatusUpdate == nil ||
		evs[0].Response.StatusUpdate.Status.Message.MessageID != "e7" || evs[1].Response.StatusUpdate.Status.Message.MessageID != "e8" {
		t.Errorf("Events(6) = %v, %v; want [7 8] with their bodies", eventSeqs(evs), err)
	}
	if evs, err := es.Events(ctx, "t1", 8); err != nil || len(evs) != 0 {
		t.Errorf("Events(last) = %v, %v; want none", eventSeqs(evs), err)
	}
	for _, after := range []uint64{0, 2, 9} {
		if _, err := es.Events(ctx, "t1", after); !errors.Is(err, ErrEventsGone) {
			t.Errorf("Events(%d) with 4..8 held = %v, want ErrEventsGone", after, err)
		}
	}
	if n, _ := es.LastEventSeq(ctx, "t1"); n != 8 {
		t.Errorf("LastEventSeq = %d, want 8", n)
	}
	// Another task's log is apart, also with an id that needs escaping.
	for _, id := range []string{"t2", "t1}:ev{x"} {
		if n, _ := es.LastEventSeq(ctx, id); n != 0 {
			t.Errorf("LastEventSeq(%q) = %d, want 0", id, n)
		}
		if err := es.AppendEvents(id, seqEvents(1, 1), 0); err != nil {
			t.Fatal(err)
		}
		if evs, err := es.Events(ctx, id, 0); err != nil || fmt.Sprint(eventSeqs(evs)) != "[1]" {
			t.Errorf("Events(%q, 0) = %v, %v; want [1]", id, eventSeqs(evs), err)
		}
	}
	if n, _ := es.LastEventSeq(ctx, "t1"); n != 8 {
		t.Errorf("LastEventSeq(t1) after other tasks' appends = %d, want 8", n)
	}
}

// TestStoredBusReplaysAcrossTurns (RPC-17): a log opened over the stored
// events of earlier turns numbers on from them, and a subscription from
// before the turn replays the stored events, then the turn's, then live
// ones, without gap or duplicate.
func TestStoredBusReplaysAcrossTurns(t *testing.T) { eachStore(t, testStoredBusReplaysAcrossTurns) }

func testStoredBusReplaysAcrossTurns(t *testing.T, s FullStore) {
	es := eventStoreOf(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	task := &a2a.Task{ID: "t2", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
	bus := NewStoredBus(es)
	turn1, _ := bus.Open("t2", LogOptions{})
	watcher, err := turn1.Subscribe(0) // a watched turn stores every event
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		turn1.Publish(logEvent("one"))
	}
	turn1.Close()
	watcher.Close()
	if err := s.PutTask(ctx, "alice", task); err != nil {
		t.Fatal(err)
	}
	last, _ := es.LastEventSeq(ctx, "t2")
	turn2, _ := bus.Open("t2", LogOptions{After: last})
	if seq := turn2.Publish(logEvent("two")); seq != 4 {
		t.Fatalf("first event of the second turn numbered %d, want 4", seq)
	}
	sub, err := turn2.Subscribe(1)
	if err != nil {
		t.Fatal(err)
	}
	turn2.Publish(logEvent("live"))
	turn2.Close()
	var got []uint64
	for {
		ev, ok := sub.Next(ctx)
		if !ok {
			break
		}
		got = append(got, ev.Seq)
	}
	if fmt.Sprint(got) != "[2 3 4 5]" {
		t.Errorf("resumed after 1 across the turn boundary: %v, want [2 3 4 5]", got)
	}
}

// TestSentMessagesConformance (RPC-18): a claim of a (owner, messageId,
// target) already claimed within the window returns the first claim;
// other owners, message ids and targets are new; past the window the id
// is new again (and replaces the record); a forgotten claim is new.
func TestSentMessagesConformance(t *testing.T) { eachStore(t, testSentMessages) }

func testSentMessages(t *testing.T, s FullStore) {
	ss := sentStoreOf(t, s)
	ctx := context.Background()
	now := time.Now()
	since := now.Add(-time.Minute)
	first := SentMessage{Owner: "alice", MessageID: "m1", Target: "context:", TaskID: "t1", StartSeq: 7, BodyHash: "h1", At: now}
	if prior, err := ss.ClaimMessage(ctx, first, since); err != nil || prior != nil {
		t.Fatalf("first claim: %+v, %v", prior, err)
	}
	again := first
	again.TaskID, again.StartSeq, again.BodyHash, again.At = "t2", 9, "h2", now.Add(time.Second)
	prior, err := ss.ClaimMessage(ctx, again, since)
	if err != nil || prior == nil || prior.TaskID != "t1" || prior.StartSeq != 7 || prior.BodyHash != "h1" ||
		prior.At.UnixMilli() != now.UnixMilli() || prior.Owner != "alice" || prior.MessageID != "m1" || prior.Target != "context:" {
		t.Fatalf("second claim returned %+v, %v; want the first", prior, err)
	}
	for _, m := range []SentMessage{
		{Owner: "bob", MessageID: "m1", Target: "context:", TaskID: "t3", At: now},
		{Owner: "alice", MessageID: "m1", Target: "task:t9", TaskID: "t9", At: now},
		{Owner: "alice", MessageID: "m2", Target: "context:", TaskID: "t4", At: now},
		// Separators and braces in the parts cannot alias another key.
		{Owner: "alice", MessageID: "m1:context:", Target: "", TaskID: "t5", At: now},
		{Owner: "alice}:sent:m1", MessageID: "context:", Target: "", TaskID: "t6", At: now},
	} {
		if prior, err := ss.ClaimMessage(ctx, m, since); err != nil || prior != nil {
			t.Errorf("claim %+v: %+v, %v; want a new claim", m, prior, err)
		}
	}
	// Past the window the id is new, and the new record is the one held.
	late := again
	late.At = now.Add(2 * time.Second)
	if prior, err := ss.ClaimMessage(ctx, late, now.Add(time.Millisecond)); err != nil || prior != nil {
		t.Errorf("claim after the window: %+v, %v; want a new claim", prior, err)
	}
	if prior, err := ss.ClaimMessage(ctx, first, since); err != nil || prior == nil || prior.TaskID != "t2" {
		t.Errorf("claim after the replacing claim: %+v, %v; want the replacing record (t2)", prior, err)
	}
	if err := ss.ForgetMessage(ctx, "alice", "m1", "context:"); err != nil {
		t.Fatal(err)
	}
	if prior, err := ss.ClaimMessage(ctx, first, since); err != nil || prior != nil {
		t.Errorf("claim after ForgetMessage: %+v, %v; want a new claim", prior, err)
	}
	if err := ss.ForgetMessage(ctx, "nobody", "none", "context:"); err != nil {
		t.Errorf("ForgetMessage of an unknown record: %v", err)
	}
}
