package tests

// Resumable streams and idempotent sends across gateway instances on one
// Redis (RPC-17, RPC-18, SCALE-1): the event log and the sent message ids
// live in the shared store, so another instance replays a task's events
// and recognises a resent messageId.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// resumeRedisGateways starts two gateways with the slow echo backend on
// one real redis-server.
func resumeRedisGateways(t *testing.T) (a, b string) {
	t.Helper()
	ga, gb := resumeRedisPair(t)
	return ga.URL, gb.URL
}

// resumeRedisPair is resumeRedisGateways with the gateways themselves
// (their output tells when a turn ended).
func resumeRedisPair(t *testing.T) (ga, gb *harness.Gateway) {
	t.Helper()
	addr := harness.StartRedis(t)
	// dedupe always: the idempotent-send tests below need no header
	// (RPC-18; the extension-activated path is in idempotent_test.go).
	site := "a2a {\n\tcard {\n\t\tname resume\n\t}\n\tdedupe always\n\t" + protoSlowEcho + "\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	return gws[0], gws[1]
}

// sseStates returns "<sse id>:<state or kind>" of every event.
func sseStates(evs []harness.Event) []string {
	var out []string
	for _, ev := range evs {
		kind := eventStateOf(ev)
		if kind == "" {
			for k := range ev.Map {
				kind = k
			}
		}
		out = append(out, ev.SSEID+":"+kind)
	}
	return out
}

// TestRedisResumeOnOtherInstance (RPC-17, SCALE-1): a stream of a task on
// A, canceled mid-turn (a terminal task); SubscribeToTask on B with
// Last-Event-ID replays exactly A's events after that id, then ends. A
// follow-up turn on B numbers its events on from A's.
func TestRedisResumeOnOtherInstance(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)

	// A first turn to the end (INPUT_REQUIRED), then a second one on A
	// canceled after its first chunk: CANCELED is terminal.
	m := protoMsg("resume me elsewhere", "", "")
	s := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s1"))
	first := s.RestEvents(30 * time.Second)
	if len(first) < 3 || first[0].Map["task"] == nil || eventStateOf(first[len(first)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first turn on A: %v", sseStates(first))
	}
	taskID := first[0].Map["task"].(map[string]any)["id"].(string)
	wantConsecutive(t, "first turn on A", sseSeqs(t, first[1:]), 1)
	end1 := sseSeqs(t, first[1:])[len(first)-2]

	s2 := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("and again", "", taskID)}, harness.ID("s2"))
	second := s2.Take(3, 30*time.Second) // Task, WORKING, the first chunk
	if _, rerr := harness.At(a).RPC(t, "CancelTask", map[string]any{"id": taskID}); rerr != nil {
		t.Fatalf("CancelTask on A: %v", rerr)
	}
	second = append(second, s2.RestEvents(30*time.Second)...)
	if eventStateOf(second[len(second)-1]) != "TASK_STATE_CANCELED" {
		t.Fatalf("second turn on A: %v, want it to end CANCELED", sseStates(second))
	}
	seqs2 := sseSeqs(t, second[1:])
	wantConsecutive(t, "second turn on A", seqs2, end1+1)
	onA := append(append([]harness.Event(nil), first[1:]...), second[1:]...)

	// B, after the turn: Last-Event-ID 2 replays A's events 3… and ends.
	r := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("r1"), harness.Header("Last-Event-ID", "2"), resumeExt)
	replay := r.RestEvents(30 * time.Second)
	if got, want := sseStates(replay), sseStates(onA[2:]); !slices.Equal(got, want) {
		t.Fatalf("replay on B after 2:\n got %v\nwant %v (A's events after 2, then the end)", got, want)
	}
	// Every event id of the log works as a resume point on B, the last
	// one included (nothing to replay: the stream just ends).
	last := seqs2[len(seqs2)-1]
	for _, after := range []uint64{0, end1, last} {
		r := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("r2"), harness.Header("Last-Event-ID", fmt.Sprint(after)), resumeExt)
		got := r.RestEvents(30 * time.Second)
		if want := sseStates(onA[after:]); !slices.Equal(sseStates(got), want) {
			t.Fatalf("replay on B after %d: %v, want %v", after, sseStates(got), want)
		}
	}
}

// TestRedisResumeNumbersAcrossInstances (RPC-17, SCALE-1): a follow-up
// turn on B numbers its events on from the first turn's on A, and a
// subscription on B from before B's turn replays A's events too.
func TestRedisResumeNumbersAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)
	s := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("one", "", "")}, harness.ID("s1"))
	first := s.RestEvents(30 * time.Second)
	if len(first) < 3 || first[0].Map["task"] == nil {
		t.Fatalf("first turn on A: %v", sseStates(first))
	}
	taskID := first[0].Map["task"].(map[string]any)["id"].(string)
	end1 := sseSeqs(t, first[1:])[len(first)-2]
	s2 := harness.At(b).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("two", "", taskID)}, harness.ID("s2"))
	second := s2.RestEvents(30 * time.Second)
	if len(second) < 3 || eventStateOf(second[len(second)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("second turn on B: %v", sseStates(second))
	}
	wantConsecutive(t, "second turn on B (numbered on from A's turn)", sseSeqs(t, second[1:]), end1+1)
	// B replays both turns from 1 (the task at rest: the replay, then the
	// stream waits for a next turn, so it is read up to the last event).
	h := harness.At(b+"/tasks/"+taskID+":subscribe").StreamHTTP(t, "GET", "", harness.Header("Last-Event-ID", "1"), resumeExt)
	want := sseStates(append(append([]harness.Event(nil), first[2:]...), second[1:]...))
	var got []harness.Event
	for len(got) < len(want) {
		ev, ok := h.NextEvent(30 * time.Second)
		if !ok {
			break
		}
		got = append(got, ev)
	}
	h.Close()
	if !slices.Equal(sseStates(got), want) {
		t.Fatalf("replay on B across both turns:\n got %v\nwant %v", sseStates(got), want)
	}
}

// TestRedisIdempotentSendAcrossInstances (RPC-18, SCALE-1): the same
// messageId streamed to A, then sent to B (blocking, then streaming)
// starts one turn: B answers with A's task and streams A's turn's events.
// (A blocking first send is nobody's stream: its turn keeps only its last
// event, and a streaming resend gets the task snapshot.)
func TestRedisIdempotentSendAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)
	m := protoMsg("only once, anywhere", "", "")
	orig := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s0")).RestEvents(30 * time.Second)
	if len(orig) == 0 || orig[0].Map["task"] == nil {
		t.Fatalf("first send on A: %v", sseStates(orig))
	}
	res, rerr := harness.At(a).RPC(t, "GetTask", map[string]any{"id": orig[0].Map["task"].(map[string]any)["id"]})
	if rerr != nil {
		t.Fatalf("GetTask on A: %v", rerr)
	}
	first := res
	again := scaleSend(t, b, m)
	if again["id"] != first["id"] || harness.TaskState(again) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("resend on B: task %v (%s), want A's task %v", again["id"], harness.TaskState(again), first["id"])
	}
	if h := historyTexts(again); len(h) != len(historyTexts(first)) {
		t.Fatalf("resend on B: history %v, want A's %v (no second turn)", h, historyTexts(first))
	}
	for _, url := range []string{a, b} {
		if _, total, _ := scaleList(t, url, map[string]any{}); total != 1 {
			t.Fatalf("ListTasks: %d tasks after a resend, want 1 (one turn)", total)
		}
	}
	s := harness.At(b).Stream(t, "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s1"))
	evs := s.RestEvents(30 * time.Second)
	if len(evs) < 2 || eventStateOf(evs[len(evs)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("streaming resend on B: %v, want A's turn ending INPUT_REQUIRED", sseStates(evs))
	}
	wantConsecutive(t, "streaming resend on B", sseSeqs(t, evs), 1)
	for _, ev := range evs {
		if su, _ := ev.Map["statusUpdate"].(map[string]any); su == nil && ev.Map["artifactUpdate"] == nil {
			t.Fatalf("streaming resend on B sent %v, want the first turn's events only", ev.Map)
		}
	}
	other := map[string]any{"messageId": m["messageId"], "role": "ROLE_USER", "parts": []any{map[string]any{"text": "something else"}}}
	if _, rerr := harness.At(b).RPC(t, "SendMessage", map[string]any{"message": other}); rerr == nil || rerr["code"] != float64(-32602) {
		t.Fatalf("same messageId, other body on B: %v, want -32602", rerr)
	}
	if _, total, _ := scaleList(t, b, map[string]any{}); total != 1 {
		t.Fatalf("ListTasks: %d tasks after the resends, want 1", total)
	}
}

// TestRedisResendWhileTurnRunsElsewhere (RPC-18, SCALE-1): a blocking
// SendMessage to A whose slow turn is still running; the same message
// resent to B meanwhile — blocking, then streaming — starts no second
// turn: the blocking resend answers once A's turn ended, with its final
// task, and the streaming resend gets that turn's events to its end.
func TestRedisResendWhileTurnRunsElsewhere(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)
	m := protoMsg("only once, while it runs", "", "")
	firstDone := make(chan map[string]any, 1)
	go func() {
		res, rerr := harness.At(a).RPC(t, "SendMessage", map[string]any{"message": m})
		if rerr != nil {
			t.Errorf("first send on A: %v", rerr)
			firstDone <- nil
			return
		}
		task, _ := res["task"].(map[string]any)
		firstDone <- task
	}()
	// Wait until A's turn is stored as running (a blocking turn is
	// written once it ran for a moment).
	deadline := time.Now().Add(10 * time.Second)
	for {
		ids, _, _ := scaleList(t, b, map[string]any{"status": "TASK_STATE_WORKING"})
		if len(ids) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's running turn never became visible on B")
		}
		time.Sleep(20 * time.Millisecond)
	}
	s := harness.At(b).Stream(t, "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s1"))
	again := scaleSend(t, b, m)
	if st := harness.TaskState(again); st != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("blocking resend on B answered %s while A's turn ran; want the turn's end (INPUT_REQUIRED)", st)
	}
	first := <-firstDone
	if first == nil {
		t.FailNow()
	}
	if again["id"] != first["id"] {
		t.Fatalf("resend on B: task %v, want A's %v", again["id"], first["id"])
	}
	if h := historyTexts(again); len(h) != 1 {
		t.Fatalf("history %v after a resend; want one user message (one turn)", h)
	}
	evs := s.RestEvents(30 * time.Second)
	if len(evs) == 0 || eventStateOf(evs[len(evs)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("streaming resend on B: %v, want A's turn to its end", sseStates(evs))
	}
	for _, url := range []string{a, b} {
		if _, total, _ := scaleList(t, url, map[string]any{}); total != 1 {
			t.Fatalf("ListTasks: %d tasks, want 1 (one turn)", total)
		}
	}
}
