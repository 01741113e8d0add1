package agent

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// RPC-11 (revised): SubscribeToTask on an input-required task waits for a
// follow-up turn of the task and streams all of its events.

// followUp builds a message continuing task.
func followUp(text string, task a2a.Task) *a2a.Message {
	m := msg(text)
	m.TaskID = task.ID
	return m
}

// waitWaiters polls until the hub holds n waiting streams.
func waitWaiters(t *testing.T, h *Hub, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for h.waiters() != n {
		if time.Now().After(deadline) {
			t.Fatalf("hub holds %d waiting streams, want %d", h.waiters(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// registerWaiter registers a waiter for task id as owner once its last
// turn is over.
func registerWaiter(t *testing.T, h *Hub, id, owner string) *waiter {
	t.Helper()
	for {
		r, _, _, sub, w, err := h.subscribeOrWait(id, owner, nil)
		switch {
		case err != nil:
			t.Fatalf("subscribeOrWait: %v", err)
		case w != nil:
			return w
		case r == nil:
			t.Fatal("subscribeOrWait: the hub is closing")
		}
		if sub != nil {
			r.unsubscribe(sub)
		}
		<-r.done
	}
}

// firstTask reads a stream's first event and checks it is the Task in state.
func firstTask(t *testing.T, s *sseStream, id string, state a2a.TaskState, rpcID string) {
	t.Helper()
	d, ok := s.next()
	if !ok {
		t.Fatal("stream ended before its first event")
	}
	var ev a2a.StreamResponse
	if rpcID == "" {
		ev = decodeStreamResponse(t, []byte(d))
	} else {
		ev = s.rpcEvent(d, rpcID)
	}
	if ev.Task == nil || ev.Task.ID != id || ev.Task.Status.State != state {
		t.Fatalf("first event %s, want the Task %s in %s", d, id, state)
	}
}

// checkFollowUpEvents asserts evs are the events of one follow-up turn: a
// WORKING update first, the echoed answer last, and the stream ended there.
func checkFollowUpEvents(t *testing.T, evs []a2a.StreamResponse, answer string) {
	t.Helper()
	if len(evs) < 2 {
		t.Fatalf("follow-up events %s, want the turn's updates", mustJSON(evs))
	}
	if eventState(evs[0]) != a2a.TaskStateWorking {
		t.Errorf("first follow-up event %s, want WORKING", mustJSON(evs[0]))
	}
	last := evs[len(evs)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateInputRequired ||
		last.StatusUpdate.Status.Message == nil || messageText(*last.StatusUpdate.Status.Message) != answer {
		t.Errorf("last event %s, want INPUT_REQUIRED %q", mustJSON(last), answer)
	}
}

func TestSubscribeWaitsForFollowUpTurn(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("first")))
	s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	firstTask(t, s, task.ID, a2a.TaskStateInputRequired, "1")
	waitWaiters(t, e.hub, 1)

	got := e.send("", sendReq(followUp("second", task)))
	if got.ID != task.ID || got.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("follow-up: %s %s", got.ID, got.Status.State)
	}
	checkFollowUpEvents(t, s.rpcAll("1"), "Echo: second")
	waitWaiters(t, e.hub, 0)
}

func TestSubscribeWaitingSeveralStreamsJSONRPCAndREST(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("first")))
	a := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	b, resp := e.tryStream("GET", "/tasks/"+task.ID+":subscribe", "", restHeaders(""))
	if b == nil {
		t.Fatalf("GET :subscribe: HTTP %d", resp.StatusCode)
	}
	c, resp := e.tryStream("POST", "/tasks/"+task.ID+":subscribe", "", restHeaders(""))
	if c == nil {
		t.Fatalf("POST :subscribe: HTTP %d", resp.StatusCode)
	}
	firstTask(t, a, task.ID, a2a.TaskStateInputRequired, "1")
	firstTask(t, b, task.ID, a2a.TaskStateInputRequired, "")
	firstTask(t, c, task.ID, a2a.TaskStateInputRequired, "")
	waitWaiters(t, e.hub, 3)

	// The follow-up streams too; the subscribers get what its caller gets
	// after the Task.
	own := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(followUp("again", task)), 7)
	ownEvs := own.rpcAll("7")
	if len(ownEvs) == 0 || ownEvs[0].Task == nil {
		t.Fatalf("follow-up stream %s", mustJSON(ownEvs))
	}
	ea, eb, ec := a.rpcAll("1"), b.restAll(), c.restAll()
	checkFollowUpEvents(t, ea, "Echo: again")
	if mustJSON(ea) != mustJSON(ownEvs[1:]) {
		t.Errorf("subscriber events differ from the follow-up's own stream:\n%s\n%s", mustJSON(ea), mustJSON(ownEvs[1:]))
	}
	if mustJSON(ea) != mustJSON(eb) || mustJSON(ea) != mustJSON(ec) {
		t.Errorf("subscribers got different events:\n%s\n%s\n%s", mustJSON(ea), mustJSON(eb), mustJSON(ec))
	}
}

func TestSubscribeWaitingIdleTimeoutEndsWithSnapshot(t *testing.T) {
	e := newTestEnvWith(t, Config{SubscribeIdleTimeout: 300 * time.Millisecond}, TransportConfig{KeepAlive: 100 * time.Millisecond})
	task := e.send("", sendReq(msg("idle")))
	start := time.Now()
	s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	firstTask(t, s, task.ID, a2a.TaskStateInputRequired, "1")
	rest := s.rpcAll("1")
	took := time.Since(start)
	if len(rest) != 1 || rest[0].Task == nil || rest[0].Task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("after the idle timeout: %s, want one final Task snapshot", mustJSON(rest))
	}
	if took < 250*time.Millisecond || took > 5*time.Second {
		t.Errorf("stream ended after %v, want about the 300ms idle timeout", took)
	}
	if len(s.commentLines()) == 0 {
		t.Error("no keep-alive comment while waiting")
	}
	waitWaiters(t, e.hub, 0)
}

func TestSubscribeWaitingEndsWithCancel(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("to cancel")))
	a := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	b := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 2)
	firstTask(t, a, task.ID, a2a.TaskStateInputRequired, "1")
	firstTask(t, b, task.ID, a2a.TaskStateInputRequired, "2")
	waitWaiters(t, e.hub, 2)
	var c a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": task.ID}, &c)
	if c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %s", c.Status.State)
	}
	for i, s := range []*sseStream{a, b} {
		evs := s.rpcAll([]string{"1", "2"}[i])
		if len(evs) != 1 || evs[0].StatusUpdate == nil || evs[0].StatusUpdate.Status.State != a2a.TaskStateCanceled {
			t.Errorf("subscriber %d after cancel: %s, want the CANCELED status update, then the end", i+1, mustJSON(evs))
		}
	}
	e.rpcError("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, a2a.CodeUnsupportedOperation)
}

// A stream that had just registered when a follow-up started (before it read
// the stored task) starts with that turn's task and gets all of its events:
// the follow-up is not missed.
func TestSubscribeWaiterAdoptedBeforeItReadsTheTask(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("first"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	g.waitStarted(t)
	g.release <- struct{}{}
	e.waitState("", task.ID, a2a.TaskStateInputRequired, 10*time.Second)

	w := registerWaiter(t, e.hub, task.ID, "")
	req = sendReq(followUp("second", task))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	e.send("", req)
	g.waitStarted(t)
	st, err := e.svc.subscribeWaiting(t.Context(), w, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	ev, ok := st.Next(ctx)
	if !ok || ev.Task == nil || ev.Task.Status.State != a2a.TaskStateSubmitted || len(ev.Task.History) != 3 {
		t.Fatalf("first event %s, want the follow-up's SUBMITTED task with its message", mustJSON(ev))
	}
	g.release <- struct{}{}
	var evs []a2a.StreamResponse
	for {
		ev, ok := st.Next(ctx)
		if !ok {
			break
		}
		evs = append(evs, ev)
	}
	if ctx.Err() != nil {
		t.Fatal("stream did not end with the follow-up turn")
	}
	checkFollowUpEvents(t, evs, "done: second")
}

// Another principal's stream registered under the same task id is never
// adopted by the owner's run.
func TestSubscribeWaiterOfAnotherOwnerIsNotAdopted(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("alice", sendReq(msg("mine")))
	w := registerWaiter(t, e.hub, task.ID, "mallory")
	e.send("alice", sendReq(followUp("again", task)))
	if r, _, _ := e.hub.adoption(w); r != nil {
		t.Fatal("mallory's waiter was adopted by alice's turn")
	}
	if _, err := e.svc.subscribeWaiting(t.Context(), w, nil); err == nil {
		t.Fatal("mallory subscribed to alice's task")
	}
	waitWaiters(t, e.hub, 0)
	e.rpcError("mallory", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, a2a.CodeTaskNotFound)
}

// A client that goes away while waiting leaves nothing behind: no waiter,
// no goroutine.
func TestSubscribeWaitingClientDisconnectLeaksNothing(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("leave")))
	e.srv.Client().CloseIdleConnections()
	settle := func() int {
		n := runtime.NumGoroutine()
		for range 50 {
			time.Sleep(10 * time.Millisecond)
			n = min(n, runtime.NumGoroutine())
		}
		return n
	}
	base := settle()
	var streams []*sseStream
	for i := range 5 {
		s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, i)
		firstTask(t, s, task.ID, a2a.TaskStateInputRequired, mustJSON(i))
		streams = append(streams, s)
	}
	waitWaiters(t, e.hub, 5)
	for _, s := range streams {
		s.close()
	}
	waitWaiters(t, e.hub, 0)
	e.srv.Client().CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := settle()
		if n <= base {
			break
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines after the clients left, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
		}
	}
	if m := e.hub.streams.Load(); m != 0 {
		t.Errorf("open_streams = %d after the clients left", m)
	}
	// The task still takes follow-ups.
	if got := e.send("", sendReq(followUp("back", task))); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("follow-up after the disconnects: %s", got.Status.State)
	}
}

// OPS-3: when the hub stops taking turns, waiting streams end at once with a
// final Task snapshot, and new subscriptions do not wait.
func TestSubscribeWaitingReleasedOnShutdown(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("bye")))
	s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	firstTask(t, s, task.ID, a2a.TaskStateInputRequired, "1")
	waitWaiters(t, e.hub, 1)
	done := make(chan []a2a.StreamResponse, 1)
	go func() { done <- s.rpcAll("1") }()
	start := time.Now()
	closed := make(chan struct{})
	go func() { _ = e.hub.Close(); close(closed) }()
	select {
	case evs := <-done:
		if len(evs) != 1 || evs[0].Task == nil || evs[0].Task.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("stream at shutdown: %s, want a final Task snapshot", mustJSON(evs))
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("waiting stream released after %v", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiting stream not released by Hub.Close")
	}
	<-closed
	s2 := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 2)
	if evs := s2.rpcAll("2"); len(evs) != 1 || evs[0].Task == nil {
		t.Errorf("subscription after Close: %s, want the Task then the end", mustJSON(evs))
	}
	if n := e.hub.waiters(); n != 0 {
		t.Errorf("%d waiters registered after Close", n)
	}
}

// RPC-10 + RPC-11: cancelling a running task ends every subscriber's
// stream with the CANCELED status update.
func TestSubscribeRunningTaskCanceledTwoSubscribers(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("long"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	g.waitStarted(t)
	a := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	b := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 2)
	firstTask(t, a, task.ID, a2a.TaskStateWorking, "1")
	firstTask(t, b, task.ID, a2a.TaskStateWorking, "2")
	var c a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": task.ID}, &c)
	if c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask: %s", c.Status.State)
	}
	for i, s := range []*sseStream{a, b} {
		evs := s.rpcAll([]string{"1", "2"}[i])
		if len(evs) == 0 || eventState(evs[len(evs)-1]) != a2a.TaskStateCanceled || evs[len(evs)-1].StatusUpdate == nil {
			t.Errorf("subscriber %d: %s, want the CANCELED status update last", i+1, mustJSON(evs))
		}
	}
}
