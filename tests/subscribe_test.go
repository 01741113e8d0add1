package tests

// End-to-end SubscribeToTask tests over the built binary (RPC-11 revised,
// RPC-10): a stream on an input-required task waits for the follow-up turn
// and carries all its events; subscribe_idle_timeout bounds the wait; a
// cancel ends every subscriber's stream with the CANCELED event.

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// subFirst reads the first event of s and checks it is the Task in state.
func subFirst(t *testing.T, s *protoSSE, id, state string) {
	t.Helper()
	ev, ok := s.next()
	if !ok || ev.Task == nil || ev.Task.ID != id || ev.state() != state {
		t.Fatalf("first event %+v (ok %v), want the Task %s in %s", ev, ok, id, state)
	}
}

// subCheckFollowUp asserts evs are one follow-up turn's events: WORKING
// first, the echoed answer as the last (INPUT_REQUIRED) event.
func subCheckFollowUp(t *testing.T, evs []protoEvent, prompt string) {
	t.Helper()
	if len(evs) < 2 || evs[0].state() != "TASK_STATE_WORKING" {
		t.Fatalf("follow-up events %s, want WORKING first", protoStates(evs))
	}
	last := evs[len(evs)-1]
	if last.StatusUpdate == nil || last.state() != "TASK_STATE_INPUT_REQUIRED" || last.StatusUpdate.Status.Message.text() != "Echo: "+prompt {
		t.Errorf("last event %s %+v, want INPUT_REQUIRED %q", last.state(), last.StatusUpdate, "Echo: "+prompt)
	}
}

// subStaysOpen checks that s does not end within d; it returns the
// events that arrived meanwhile.
func subStaysOpen(t *testing.T, s *protoSSE, d time.Duration) []protoEvent {
	t.Helper()
	raw, ended := s.Within(d)
	var evs []protoEvent
	for _, ev := range raw {
		evs = append(evs, s.decode(ev))
	}
	if ended {
		t.Fatalf("stream on an input-required task ended without new work: %s", protoStates(evs))
	}
	return evs
}

func TestSubscribeInputRequiredFollowUp(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoFastEcho)
	task := g.send(map[string]any{"message": protoMsg("first", "", "")})
	if task.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first turn: %s", task.Status.State)
	}

	t.Run("SendMessage", func(t *testing.T) {
		g.t = t
		s := g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID})
		subFirst(t, s, task.ID, "TASK_STATE_INPUT_REQUIRED")
		rest := subStaysOpen(t, s, 500*time.Millisecond)
		got := g.send(map[string]any{"message": protoMsg("second", "", task.ID)})
		if got.ID != task.ID || got.Status.State != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("follow-up: %s %s", got.ID, got.Status.State)
		}
		subCheckFollowUp(t, append(rest, s.rest(10*time.Second)...), "second")
	})

	// (b) Several subscribers, JSON-RPC and REST, get the same events as the
	// follow-up's own stream after its Task.
	t.Run("TwoSubscribersStreamingFollowUp", func(t *testing.T) {
		g.t = t
		a := g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID})
		b := g.stream("GET", "/tasks/"+task.ID+":subscribe", nil)
		c := g.stream("POST", "/tasks/"+task.ID+":subscribe", nil)
		for _, s := range []*protoSSE{a, b, c} {
			subFirst(t, s, task.ID, "TASK_STATE_INPUT_REQUIRED")
		}
		own := g.rpcStream("SendStreamingMessage", map[string]any{"message": protoMsg("third one", "", task.ID)})
		ownEvs := own.rest(10 * time.Second)
		if len(ownEvs) < 2 || ownEvs[0].Task == nil {
			t.Fatalf("follow-up stream %s", protoStates(ownEvs))
		}
		want, _ := json.Marshal(ownEvs[1:])
		for i, s := range []*protoSSE{a, b, c} {
			evs := s.rest(10 * time.Second)
			subCheckFollowUp(t, evs, "third one")
			if got, _ := json.Marshal(evs); string(got) != string(want) {
				t.Errorf("subscriber %d events differ from the follow-up stream's:\n%s\n%s", i+1, got, want)
			}
		}
	})

	t.Run("TerminalIsPlainJSON", func(t *testing.T) {
		g.t = t
		failed := g.send(map[string]any{"message": protoMsg("", "", "")})
		r := harness.At(g.URL).Call(t, "SubscribeToTask", map[string]any{"id": failed.ID}, harness.ID(3))
		resp, b := r.Response, r.Raw
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(b), `"code":-32004`) {
			t.Errorf("subscribe to a terminal task: %q %s", resp.Header.Get("Content-Type"), b)
		}
	})
}

// (c) subscribe_idle_timeout: without a follow-up the stream ends after a
// final Task snapshot.
func TestSubscribeIdleTimeout(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoFastEcho+"\n\t\tsubscribe_idle_timeout 1s\n\t\tkeep_alive 200ms")
	task := g.send(map[string]any{"message": protoMsg("idle", "", "")})
	for _, open := range []func() *protoSSE{
		func() *protoSSE { return g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID}) },
		func() *protoSSE { return g.stream("GET", "/tasks/"+task.ID+":subscribe", nil) },
	} {
		start := time.Now()
		s := open()
		subFirst(t, s, task.ID, "TASK_STATE_INPUT_REQUIRED")
		evs := s.rest(6 * time.Second)
		took := time.Since(start)
		if len(evs) != 1 || evs[0].Task == nil || evs[0].state() != "TASK_STATE_INPUT_REQUIRED" {
			t.Errorf("after the idle timeout: %s, want one final Task snapshot", protoStates(evs))
		}
		if took < 900*time.Millisecond {
			t.Errorf("stream ended after %v, before the 1s idle timeout", took)
		}
	}
	// The task still takes a follow-up afterwards.
	if got := g.send(map[string]any{"message": protoMsg("later", "", task.ID)}); got.Status.Message.text() != "Echo: later" {
		t.Errorf("follow-up after the idle timeout: %s %q", got.Status.State, got.Status.Message.text())
	}
}

// (d) RPC-10: canceling an input-required task ends every waiting
// subscriber's stream with the CANCELED status update.
func TestSubscribeInputRequiredCanceled(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoFastEcho)
	task := g.send(map[string]any{"message": protoMsg("cancel me", "", "")})
	a := g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID})
	b := g.stream("POST", "/tasks/"+task.ID+":subscribe", nil)
	subFirst(t, a, task.ID, "TASK_STATE_INPUT_REQUIRED")
	subFirst(t, b, task.ID, "TASK_STATE_INPUT_REQUIRED")
	var c protoTask
	g.result("CancelTask", map[string]any{"id": task.ID}, &c)
	if c.Status.State != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask: %s", c.Status.State)
	}
	for i, s := range []*protoSSE{a, b} {
		evs := s.rest(10 * time.Second)
		if len(evs) != 1 || evs[0].StatusUpdate == nil || evs[0].state() != "TASK_STATE_CANCELED" ||
			evs[0].StatusUpdate.Status.Message.text() != "Task canceled." {
			t.Errorf("subscriber %d after cancel: %s, want the CANCELED status update", i+1, protoStates(evs))
		}
	}
}

// (e) Item 9 / RPC-10: SendMessage with returnImmediately, SubscribeToTask
// and CancelTask on a slowed echo turn: every subscriber's last event is the
// CANCELED status update.
func TestSubscribeRunningTaskCanceled(t *testing.T) {
	t.Parallel()
	g := protoStart(t, "backend echo {\n\t\t\tchunks 4\n\t\t\tdelay 200ms\n\t\t}")
	for _, n := range []int{1, 2} {
		task := g.send(map[string]any{"message": protoMsg("a slow turn to cancel", "", ""), "configuration": map[string]any{"returnImmediately": true}})
		if task.Status.State != "TASK_STATE_SUBMITTED" {
			t.Fatalf("returnImmediately: %s", task.Status.State)
		}
		var subs []*protoSSE
		for range n {
			s := g.rpcStream("SubscribeToTask", map[string]any{"id": task.ID})
			ev, ok := s.next()
			if !ok || ev.Task == nil || ev.Task.ID != task.ID {
				t.Fatalf("first event %+v", ev)
			}
			subs = append(subs, s)
		}
		var c protoTask
		g.result("CancelTask", map[string]any{"id": task.ID}, &c)
		if c.Status.State != "TASK_STATE_CANCELED" {
			t.Fatalf("CancelTask: %s %q", c.Status.State, c.Status.Message.text())
		}
		var seqs []string
		for i, s := range subs {
			evs := s.rest(10 * time.Second)
			if len(evs) == 0 || evs[len(evs)-1].StatusUpdate == nil || evs[len(evs)-1].state() != "TASK_STATE_CANCELED" {
				t.Errorf("%d subscribers: subscriber %d got %s, want the CANCELED status update last", n, i+1, protoStates(evs))
			}
			for _, ev := range evs {
				if ev.state() == "TASK_STATE_INPUT_REQUIRED" || ev.state() == "TASK_STATE_COMPLETED" {
					t.Errorf("subscriber %d saw %s after the cancel", i+1, ev.state())
				}
			}
			if len(evs) > 0 {
				b, _ := json.Marshal(evs[len(evs)-1])
				seqs = append(seqs, string(b))
			}
		}
		if n == 2 && len(seqs) == 2 && seqs[0] != seqs[1] {
			t.Errorf("two subscribers ended with different events:\n%s\n%s", seqs[0], seqs[1])
		}
		if got := g.getTask(task.ID); got.Status.State != "TASK_STATE_CANCELED" {
			t.Errorf("GetTask after cancel: %s", got.Status.State)
		}
	}
}
