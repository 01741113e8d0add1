package agent

import (
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestWaitingForABusyContextHoldsNoSlot (RPC-6): with two concurrency
// slots, a turn running in context A and a second message waiting for A
// must leave the other slot to a message in context B.
func TestWaitingForABusyContextHoldsNoSlot(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, MaxConcurrentTurns: 2, ContextWait: 3 * time.Second})
	immediate := func(m *a2a.Message) *a2a.SendMessageRequest {
		r := sendReq(m)
		r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
		return r
	}
	first := e.send("", immediate(inContext(msg("one"), "ctx-a")))
	g.waitStarted(t)
	second := e.send("", immediate(inContext(msg("two"), "ctx-a"))) // waits for ctx-a
	if !blockedIn("(*convContext).acquire") {
		t.Fatal("the second message in ctx-a never waited for its context")
	}
	third := e.send("", immediate(inContext(msg("three"), "ctx-b")))
	select {
	case <-g.started: // ctx-b got the free slot while ctx-a's follow-up waits
	case <-time.After(2 * time.Second):
		t.Fatalf("the message in context B did not start: %+v", e.getTask("", third.ID).Status)
	}
	g.release <- struct{}{}
	g.release <- struct{}{}
	g.waitStarted(t) // the waiting message of ctx-a runs once ctx-a is free
	g.release <- struct{}{}
	for _, id := range []string{first.ID, second.ID, third.ID} {
		e.waitState("", id, a2a.TaskStateInputRequired, 5*time.Second)
	}
}
