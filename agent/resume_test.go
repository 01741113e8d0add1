package agent

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// seqEvent is a stream event with its sequence number.
type seqEvent struct {
	seq uint64
	ev  a2a.StreamResponse
}

// readEvents takes n events of st (n < 0: until it ends).
func readEvents(t *testing.T, st Stream, n int) []seqEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var out []seqEvent
	for n < 0 || len(out) < n {
		ev, ok := st.Next(ctx)
		if !ok {
			if ctx.Err() != nil {
				t.Fatalf("stream stalled after %d events", len(out))
			}
			if n >= 0 {
				t.Fatalf("stream ended after %d events, want %d", len(out), n)
			}
			break
		}
		out = append(out, seqEvent{st.Seq(), ev})
	}
	return out
}

// checkConsecutive fails unless evs are numbered from, from+1, … (no gap,
// no duplicate) and holds no Task snapshot.
func checkConsecutive(t *testing.T, evs []seqEvent, from uint64) {
	t.Helper()
	for i, e := range evs {
		if e.seq != from+uint64(i) || e.ev.Task != nil {
			t.Fatalf("event %d: seq %d task=%v, want seq %d and no snapshot (all: %v)", i, e.seq, e.ev.Task != nil, from+uint64(i), seqsOf(evs))
		}
	}
}

func seqsOf(evs []seqEvent) []uint64 {
	var out []uint64
	for _, e := range evs {
		out = append(out, e.seq)
	}
	return out
}

// resumeExt activates resumable streams (RPC-17); idemExt idempotent
// sends (RPC-18).
var resumeExt, idemExt = []string{StreamResumeExtension}, []string{IdempotentSendExtension}

func resumeCall(id uint64) Call {
	return Call{LastEventID: strconv.FormatUint(id, 10), Extensions: resumeExt}
}

// RPC-17: a stream cut after event k and resumed with Last-Event-ID k gets
// k+1… without gap or duplicate, live and across a turn boundary (stored
// events of the earlier turn, then the running turn's), and at rest the
// whole stored log.
func TestResumeStreamNoGapAcrossTurns(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	ctx := t.Context()
	st, err := e.svc.SendStreamingMessage(ctx, Call{}, sendReq(msg("one")))
	if err != nil {
		t.Fatal(err)
	}
	head := readEvents(t, st, 3) // Task, WORKING, the text chunk
	g.waitStarted(t)
	if head[0].ev.Task == nil || head[0].seq != 0 {
		t.Fatalf("first event seq %d task=%v, want the Task at 0", head[0].seq, head[0].ev.Task != nil)
	}
	checkConsecutive(t, head[1:], 1)
	taskID := head[0].ev.Task.ID
	st.Close() // the client went away after event 1 … and 2 it did not see
	rs, err := e.svc.SubscribeToTask(ctx, resumeCall(1), &a2a.SubscribeToTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	first := readEvents(t, rs, 1)
	g.release <- struct{}{}
	turn1 := append(first, readEvents(t, rs, -1)...)
	checkConsecutive(t, turn1, 2)
	last1 := turn1[len(turn1)-1]
	if eventState(last1.ev) != a2a.TaskStateInputRequired {
		t.Fatalf("resumed stream ended with %s, want the final INPUT_REQUIRED", mustJSON(last1.ev))
	}
	rs.Close()

	// A follow-up turn numbers on; a resume from inside the first turn
	// gets its stored tail, then the running turn.
	st2, err := e.svc.SendStreamingMessage(ctx, Call{}, sendReq(followUp("two", a2a.Task{ID: taskID})))
	if err != nil {
		t.Fatal(err)
	}
	head2 := readEvents(t, st2, 3)
	g.waitStarted(t)
	if head2[0].seq != last1.seq {
		t.Errorf("follow-up's Task snapshot seq %d, want %d (the task's last event)", head2[0].seq, last1.seq)
	}
	checkConsecutive(t, head2[1:], last1.seq+1)
	rs2, err := e.svc.SubscribeToTask(ctx, resumeCall(last1.seq-1), &a2a.SubscribeToTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, rs2, 3)
	g.release <- struct{}{}
	got = append(got, readEvents(t, rs2, -1)...)
	checkConsecutive(t, got, last1.seq)
	if eventState(got[0].ev) != a2a.TaskStateInputRequired || eventState(got[len(got)-1].ev) != a2a.TaskStateInputRequired {
		t.Errorf("across the boundary: first %s last %s, want turn 1's and turn 2's final states", mustJSON(got[0].ev), mustJSON(got[len(got)-1].ev))
	}
	rest2 := readEvents(t, st2, -1)
	last2 := rest2[len(rest2)-1].seq
	if got[len(got)-1].seq != last2 {
		t.Errorf("resumed stream ended at %d, the original at %d", got[len(got)-1].seq, last2)
	}

	// At rest (input-required): the whole log from the store, then the
	// stream waits for the next turn (RPC-11).
	rs3, err := e.svc.SubscribeToTask(ctx, resumeCall(0), &a2a.SubscribeToTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	defer rs3.Close()
	all := readEvents(t, rs3, int(last2))
	checkConsecutive(t, all, 1)
}

// burstGate emits n text chunks, then waits like gateBackend.
type burstGate struct {
	*gateBackend
	n int
}

func (b burstGate) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	for i := range b.n {
		if err := emit(backend.Event{V: 1, Type: backend.EventText, Text: fmt.Sprint("chunk ", i)}); err != nil {
			return err
		}
	}
	return b.gateBackend.RunTurn(ctx, req, emit)
}

// RPC-17: an id older than the (bounded) log gets the current Task
// snapshot first, numbered with its last event, then the live events.
func TestResumeOlderThanLogSnapshotFirst(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: burstGate{g, 8}, EventLogSize: 3})
	ctx := t.Context()
	st, err := e.svc.SendStreamingMessage(ctx, Call{}, sendReq(msg("many")))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	head := readEvents(t, st, 11) // Task, WORKING, 8 chunks, "working on it"
	g.waitStarted(t)
	taskID := head[0].ev.Task.ID
	rs, err := e.svc.SubscribeToTask(ctx, resumeCall(2), &a2a.SubscribeToTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	snap := readEvents(t, rs, 1)[0]
	if snap.ev.Task == nil || snap.seq != head[10].seq {
		t.Fatalf("resume from an evicted id: first event seq %d task=%v, want the Task snapshot at %d", snap.seq, snap.ev.Task != nil, head[10].seq)
	}
	g.release <- struct{}{}
	live := readEvents(t, rs, -1)
	checkConsecutive(t, live, snap.seq+1)
	if len(live) == 0 || eventState(live[len(live)-1].ev) != a2a.TaskStateInputRequired {
		t.Fatalf("live part %v does not end with the final state", seqsOf(live))
	}
	last := live[len(live)-1].seq
	// The stored log is bounded too.
	if evs, err := e.st.Events(ctx, taskID, last-3); err != nil || len(evs) != 3 {
		t.Errorf("stored log after %d: %d events, %v; want the last 3", last-3, len(evs), err)
	}
	if _, err := e.st.Events(ctx, taskID, last-4); !errors.Is(err, store.ErrEventsGone) {
		t.Errorf("stored log after %d: %v, want ErrEventsGone", last-4, err)
	}
	at, err := e.svc.SubscribeToTask(ctx, resumeCall(1), &a2a.SubscribeToTaskRequest{ID: taskID})
	if err != nil {
		t.Fatal(err)
	}
	defer at.Close()
	if s := readEvents(t, at, 1)[0]; s.ev.Task == nil || s.seq != last {
		t.Errorf("at rest, resume from an evicted id: seq %d task=%v, want the snapshot at %d", s.seq, s.ev.Task != nil, last)
	}
}

// RPC-11 kept, RPC-17: a terminal task still refuses a plain
// SubscribeToTask; with Last-Event-ID it replays what followed and ends.
func TestResumeTerminalTaskReplaysAndEnds(t *testing.T) {
	done := scriptBackend{events: []backend.Event{
		{V: 1, Type: backend.EventText, Text: "a"},
		{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "done"},
	}}
	e := newTestEnv(t, Config{Backend: done})
	ctx := t.Context()
	st, err := e.svc.SendStreamingMessage(ctx, Call{}, sendReq(msg("x")))
	if err != nil {
		t.Fatal(err)
	}
	all := readEvents(t, st, -1)
	taskID := all[0].ev.Task.ID
	last := all[len(all)-1].seq
	if eventState(all[len(all)-1].ev) != a2a.TaskStateCompleted {
		t.Fatalf("turn ended %s", mustJSON(all[len(all)-1].ev))
	}
	var ae *a2a.Error
	if _, err := e.svc.SubscribeToTask(ctx, Call{}, &a2a.SubscribeToTaskRequest{ID: taskID}); !errors.As(err, &ae) || ae.Code != a2a.CodeUnsupportedOperation {
		t.Fatalf("plain SubscribeToTask on a completed task: %v, want UnsupportedOperation", err)
	}
	// Without the extension, Last-Event-ID and metadata.lastEventId are
	// not read (a plain 1.0 request, whose metadata is its own).
	for _, c := range []struct {
		call Call
		md   map[string]any
	}{{Call{LastEventID: "1"}, nil}, {Call{}, map[string]any{LastEventIDKey: "x"}}} {
		if _, err := e.svc.SubscribeToTask(ctx, c.call, &a2a.SubscribeToTaskRequest{ID: taskID, Metadata: c.md}); !errors.As(err, &ae) || ae.Code != a2a.CodeUnsupportedOperation {
			t.Errorf("plain SubscribeToTask %+v %v: %v, want UnsupportedOperation (no resume)", c.call, c.md, err)
		}
	}
	rs, err := e.svc.SubscribeToTask(ctx, Call{Extensions: resumeExt}, &a2a.SubscribeToTaskRequest{ID: taskID, Metadata: map[string]any{LastEventIDKey: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	got := readEvents(t, rs, -1)
	checkConsecutive(t, got, 2)
	if got[len(got)-1].seq != last {
		t.Errorf("replay ended at %d, want %d", got[len(got)-1].seq, last)
	}
	if _, err := e.svc.SubscribeToTask(ctx, Call{LastEventID: "x", Extensions: resumeExt}, &a2a.SubscribeToTaskRequest{ID: taskID}); !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Errorf("Last-Event-ID x: %v, want InvalidParams", err)
	}
}

// countingBackend counts its turns and answers completed.
type countingBackend struct{ turns *atomic.Int64 }

func (b countingBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	b.turns.Add(1)
	if err := emit(backend.Event{V: 1, Type: backend.EventText, Text: "hi " + req.Prompt}); err != nil {
		return err
	}
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired})
}

// RPC-18: with the extension activated, the same messageId twice from
// one principal is one task and one turn (blocking and streaming, where the resend replays the first
// stream's events); another body under it is -32602; another principal, or
// the same one after the window, starts a new turn.
func TestDedupeSends(t *testing.T) {
	var turns atomic.Int64
	// A window far longer than the test: a loaded machine cannot make a
	// resend fall out of it (the expiry has its own env below).
	e := newTestEnv(t, Config{Backend: countingBackend{&turns}, DedupeWindow: time.Hour})
	ctx := t.Context()
	alice := Call{Principal: "alice", Extensions: idemExt}
	m := msg("once")
	a, err := e.svc.SendMessage(ctx, alice, sendReq(m))
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.svc.SendMessage(ctx, alice, sendReq(&a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: m.Parts}))
	if err != nil {
		t.Fatal(err)
	}
	if a.Task == nil || b.Task == nil || a.Task.ID != b.Task.ID || turns.Load() != 1 {
		t.Fatalf("resend: tasks %v / %v, %d turns; want one task, one turn", a.Task, b.Task, turns.Load())
	}
	if b.Task.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("resend answered state %s, want the task as the turn left it", b.Task.Status.State)
	}
	_, err = e.svc.SendMessage(ctx, alice, sendReq(&a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("other")}}))
	var ae *a2a.Error
	if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
		t.Fatalf("same messageId, other body: %v, want -32602", err)
	}
	if c, err := e.svc.SendMessage(ctx, Call{Principal: "bob", Extensions: idemExt}, sendReq(&a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: m.Parts})); err != nil || c.Task.ID == a.Task.ID {
		t.Fatalf("another principal's send under the same id: %v, %v; want its own task", c, err)
	}
	if turns.Load() != 2 {
		t.Fatalf("%d turns after bob's send, want 2", turns.Load())
	}

	// Streaming: the resend streams the first send's events from its start.
	sm := msg("streamed")
	st, err := e.svc.SendStreamingMessage(ctx, alice, sendReq(sm))
	if err != nil {
		t.Fatal(err)
	}
	orig := readEvents(t, st, -1)
	again, err := e.svc.SendStreamingMessage(ctx, alice, sendReq(&a2a.Message{MessageID: sm.MessageID, Role: a2a.RoleUser, Parts: sm.Parts}))
	if err != nil {
		t.Fatal(err)
	}
	replay := readEvents(t, again, -1)
	if turns.Load() != 3 {
		t.Fatalf("%d turns after a streaming resend, want 3", turns.Load())
	}
	if fmt.Sprint(seqsOf(replay)) != fmt.Sprint(seqsOf(orig[1:])) || replay[0].ev.StatusUpdate.TaskID != orig[0].ev.Task.ID {
		t.Errorf("streaming resend: %v, want the first stream's events %v of task %s", seqsOf(replay), seqsOf(orig[1:]), orig[0].ev.Task.ID)
	}

	// After the window the same id is a new message: a short window of its
	// own, and a wait of the window (the bound the code sets) plus slack.
	var shortTurns atomic.Int64
	short := newTestEnv(t, Config{Backend: countingBackend{&shortTurns}, DedupeWindow: 200 * time.Millisecond})
	first, err := short.svc.SendMessage(ctx, alice, sendReq(m))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200*time.Millisecond + 300*time.Millisecond) // sleep: the dedupe window must pass
	if d, err := short.svc.SendMessage(ctx, alice, sendReq(&a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: m.Parts})); err != nil || d.Task.ID == first.Task.ID {
		t.Fatalf("resend after the window: %v, %v; want a new task", d, err)
	}
	if shortTurns.Load() != 2 {
		t.Errorf("%d turns after the window, want 2", shortTurns.Load())
	}
}

// RPC-18: a resend while the first blocking send's turn still runs waits
// for it like the first, and a send that failed before its turn (a
// refused follow-up) can be retried.
func TestDedupeResendWhileRunning(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	ctx := t.Context()
	m := msg("slow")
	type res struct {
		r   *a2a.SendMessageResponse
		err error
	}
	out := make(chan res, 2)
	send := func() {
		r, err := e.svc.SendMessage(ctx, Call{Extensions: idemExt}, sendReq(&a2a.Message{MessageID: m.MessageID, Role: a2a.RoleUser, Parts: m.Parts}))
		out <- res{r, err}
	}
	go send()
	g.waitStarted(t)
	go send()
	select {
	case r := <-out:
		t.Fatalf("a send answered before the turn ended: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	g.release <- struct{}{}
	recv := func() res {
		select {
		case r := <-out:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("a send did not answer after its turn ended (a second turn waits for the gate?)")
			return res{}
		}
	}
	a, b := recv(), recv()
	if a.err != nil || b.err != nil || a.r.Task.ID != b.r.Task.ID || b.r.Task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first %+v %v, resend %+v %v: want the same task once the turn is over", a.r, a.err, b.r, b.err)
	}
	select {
	case id := <-g.started:
		t.Fatalf("the resend started a second turn (%s)", id)
	default:
	}
	// A follow-up to an unknown task fails before its turn: a retry under
	// the same id is not answered from the failed send.
	bad := followUp("nope", a2a.Task{ID: "no-such-task"})
	for range 2 {
		var ae *a2a.Error
		if _, err := e.svc.SendMessage(ctx, Call{Extensions: idemExt}, sendReq(&a2a.Message{MessageID: bad.MessageID, TaskID: bad.TaskID, Role: a2a.RoleUser, Parts: bad.Parts})); !errors.As(err, &ae) || ae.Code != a2a.CodeTaskNotFound {
			t.Fatalf("follow-up of an unknown task: %v, want TaskNotFound", err)
		}
	}
}

// RPC-17: metadata.lastEventId of a JSON-RPC SubscribeToTask resumes like
// the Last-Event-ID header, and the SSE ids are the sequence numbers.
func TestResumeMetadataOverJSONRPC(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 2}})
	// A streamed turn: its events are stored (a blocking send's turn,
	// which nobody watched, stores only its last event).
	first := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("meta")), 6)
	evs := first.rpcAll("6")
	first.close()
	if len(evs) == 0 || evs[0].Task == nil {
		t.Fatalf("no task in the stream: %v", evs)
	}
	task := *evs[0].Task
	e.waitState("", task.ID, a2a.TaskStateInputRequired, 10*time.Second)
	last := e.svc.lastSeq(t.Context(), task.ID)
	hdr := v1Headers("")
	hdr.Set("A2A-Extensions", StreamResumeExtension)
	s := e.openStream("/", rpcBody(7, a2a.MethodSubscribeToTask, map[string]any{"id": task.ID, "metadata": map[string]any{LastEventIDKey: "2"}}), hdr)
	defer s.close()
	// The replay, then the stream waits for a next turn (input-required).
	var ids []string
	for uint64(len(ids)) < last-2 {
		line, err := s.br.ReadString('\n')
		if err != nil {
			break
		}
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "id: "); ok {
			ids = append(ids, v)
		}
	}
	if len(ids) == 0 || ids[0] != "3" || ids[len(ids)-1] != strconv.FormatUint(last, 10) || uint64(len(ids)) != last-2 {
		t.Errorf("SSE ids %v, want 3..%d", ids, last)
	}
}
