package agent

import (
	"context"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// run is a task whose turn is in progress. It keeps the live snapshot of the
// task and publishes its events, in order, on the turn's event log, which
// fans them out to any number of subscriptions.
type run struct {
	owner string
	log   store.EventLog
	done  chan struct{} // closed once the final state is stored and published

	// writeMu orders the lazy write of a running turn before its final
	// write; lazy is the timer of that lazy write.
	writeMu sync.Mutex
	lazy    *time.Timer
	// durable says the SUBMITTED task was stored before the caller heard of
	// it (streaming, returnImmediately, push): later states are stored at
	// once too, without waiting for the commit.
	durable bool

	// mu guards the snapshot and orders every Publish and Subscribe on log,
	// so a subscriber's first snapshot and its first event agree.
	mu        sync.Mutex
	task      a2a.Task
	finished  bool
	canceling bool
	finalized bool // the final state is decided; later backend events are dropped
	// invalidResponse is the correlation id of a turn that ended FAILED on
	// invalid backend output: a blocking SendMessage answers -32006.
	invalidResponse string
	// trace is the tracing of the request that started the turn (OPS-4).
	trace turnTrace
	// release ends the turn's count against its caller's max_turns
	// (AUTH-6); nil when none applies. Called once the run finishes.
	release func()
}

// newRun opens the event log of a turn of t on the hub's bus and returns
// the run with the context its turn runs under (canceled by r.cancel).
func (h *Hub) newRun(owner string, t *a2a.Task) (*run, context.Context) {
	log, ctx := h.bus.Open(t.ID)
	return &run{owner: owner, log: log, task: *t, done: make(chan struct{})}, ctx
}

// cancel asks the run's turn to stop with cause (the cancel signal of the
// event log: RPC-10, OPS-3).
func (r *run) cancel(cause error) { r.log.Cancel(cause) }

// snapshot returns a copy of the live task safe to hand out.
func (r *run) snapshot() a2a.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneTask(&r.task)
}

// ids returns the task's id and context id (both fixed for a run) without
// copying the task.
func (r *run) ids() (id, contextID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task.ID, r.task.ContextID
}

// publish applies change to the live task (when non-nil) and publishes ev,
// atomically with respect to subscribe. Once the final state is decided,
// only publishFinal gets through.
func (r *run) publish(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized {
		return
	}
	r.deliver(ev, change)
}

// publishFinal publishes the events that close a turn.
func (r *run) publishFinal(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	r.deliver(ev, change)
}

// deliver is publish with r.mu held.
func (r *run) deliver(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	if change != nil {
		change(&r.task)
	}
	r.log.Publish(ev)
}

// subscribeLocked subscribes to the events after the snapshot; r.mu is held.
func (r *run) subscribeLocked() store.Subscription {
	// r.mu orders every Publish: Last is the snapshot's event, so the
	// in-process log never answers ErrEventsGone here.
	sub, err := r.log.Subscribe(r.log.Last())
	if err != nil {
		return endedSubscription{} // against the EventLog contract: the stream ends
	}
	return sub
}

// endedSubscription is a subscription that has ended.
type endedSubscription struct{}

func (endedSubscription) Next(context.Context) (store.Event, bool) { return store.Event{}, false }
func (endedSubscription) Close()                                   {}

// subscribe returns the current task and a subscription to every later
// event; the subscription ends once the run finishes.
func (r *run) subscribe() (a2a.Task, store.Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneTask(&r.task), r.subscribeLocked()
}

// subscribeLive is subscribe for SubscribeToTask: ok is false (and nothing
// is registered) once the run's final state is decided, when the caller
// must wait for done and read the stored task instead.
func (r *run) subscribeLive() (a2a.Task, store.Subscription, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized || r.finished {
		return a2a.Task{}, nil, false
	}
	return cloneTask(&r.task), r.subscribeLocked(), true
}

// unsubscribe ends sub, a subscription to the run's events.
func (r *run) unsubscribe(sub store.Subscription) { sub.Close() }

// finish ends every subscription (after it drains) and marks the run done.
func (r *run) finish() {
	r.mu.Lock()
	r.finished = true
	r.log.Close()
	r.mu.Unlock()
	close(r.done)
	if r.release != nil {
		r.release()
	}
}

// cloneTask copies a task deeply enough that later appends and status
// changes on the original do not show through.
func cloneTask(t *a2a.Task) a2a.Task {
	c := *t
	c.History = append([]a2a.Message(nil), t.History...)
	c.Artifacts = append([]a2a.Artifact(nil), t.Artifacts...)
	if len(c.History) == 0 {
		c.History = nil
	}
	if len(c.Artifacts) == 0 {
		c.Artifacts = nil
	}
	return c
}
