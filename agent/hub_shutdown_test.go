package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// OPS-3: Close gives all running turns together the drain timeout, then
// cancels every one still running; with several turns it must not wait for
// the second one to end by itself.
func TestHubCloseDrainsSeveralTurnsWithinTheDrainTimeout(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	e.hub.SetDrainTimeout(200 * time.Millisecond)
	var ids []string
	for range 3 {
		req := sendReq(msg("long"))
		req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		ids = append(ids, e.send("", req).ID)
		g.waitStarted(t)
	}
	// One turn ends by itself during the drain.
	g.release <- struct{}{}
	start := time.Now()
	closed := make(chan struct{})
	go func() { _ = e.hub.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		for range 3 {
			g.release <- struct{}{} // unblock the turns, so that cleanup ends
		}
		t.Fatal("Hub.Close did not return within 5s with a 200ms drain timeout")
	}
	if took := time.Since(start); took < 150*time.Millisecond {
		t.Errorf("Close returned after %v, before the drain timeout", took)
	}
	var failed, finished int
	for _, id := range ids {
		got, err := e.st.GetTask(t.Context(), "", id)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case got.Status.State == a2a.TaskStateFailed && statusText(*got) == InterruptedMessage:
			failed++
		case got.Status.State == a2a.TaskStateInputRequired:
			finished++
		default:
			t.Errorf("task %s after Close: %s %q", id, got.Status.State, statusText(*got))
		}
	}
	if failed != 2 || finished != 1 {
		t.Errorf("after Close: %d failed and %d finished, want 2 and 1", failed, finished)
	}
}

// OPS-3: once the process exits the hub refuses new turns with a clear
// error while a running turn goes on and ends normally.
func TestHubStopAcceptingRefusesNewTurns(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("running"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	running := e.send("", req)
	g.waitStarted(t)

	e.hub.StopAccepting()
	if !e.hub.Closing() {
		t.Fatal("Closing() is false after StopAccepting")
	}
	rep := e.call("", a2a.MethodSendMessage, sendReq(msg("new")))
	if rep.Error == nil || !strings.Contains(rep.Error.Message, "shutting down") {
		t.Fatalf("a new turn after StopAccepting: %+v, want an error saying the gateway is shutting down", rep)
	}
	g.release <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := e.getTask("", running.ID)
		if got.Status.State == a2a.TaskStateInputRequired {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running turn is %s after StopAccepting and its release", got.Status.State)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
