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
	agent string // the agent label of the service that started it (active_turns)
	log   store.EventLog
	start uint64        // the task's last event before the turn (RPC-17)
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
	// storeRefused says the turn never ran because the store failed when
	// its context was leased (a Redis outage at the turn's start); unstored
	// says its final state was then not stored either: a blocking
	// SendMessage answers an error, not a task nobody can read back.
	storeRefused, unstored bool
	// trace is the tracing of the request that started the turn (OPS-4).
	trace turnTrace
	// release ends the turn's count against its caller's max_turns
	// (AUTH-6); nil when none applies. Called once the run finishes.
	release func()
}

// newRun opens the event log of a turn of t on the hub's bus, numbered on
// from the task's last logged event (none for a fresh task: no lookup), and
// returns the run with the context its turn runs under (canceled by
// r.cancel). keep bounds the task's log (RPC-17).
func (h *Hub) newRun(ctx context.Context, owner string, t *a2a.Task, keep int, fresh bool) (*run, context.Context, error) {
	var after uint64
	if es := h.caps().Events; es != nil && !fresh {
		var err error
		if after, err = es.LastEventSeq(ctx, t.ID); err != nil {
			return nil, nil, err
		}
	}
	log, runCtx := h.eventBus().Open(t.ID, store.LogOptions{After: after, Keep: keep})
	return &run{owner: owner, log: log, start: after, task: *t, done: make(chan struct{})}, runCtx, nil
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

// subscribeLocked subscribes to the events after the snapshot and returns
// the snapshot's sequence number (its last event); r.mu is held.
func (r *run) subscribeLocked() (uint64, store.Subscription) {
	// r.mu orders every Publish: Last is the snapshot's event, so the
	// log never answers ErrEventsGone here.
	last := r.log.Last()
	sub, err := r.log.Subscribe(last)
	if err != nil {
		return last, endedSubscription{} // against the EventLog contract: the stream ends
	}
	return last, sub
}

// endedSubscription is a subscription that has ended.
type endedSubscription struct{}

func (endedSubscription) Next(context.Context) (store.Event, bool) { return store.Event{}, false }
func (endedSubscription) Close()                                   {}

// Buffered is true: Next returns at once.
func (endedSubscription) Buffered() bool { return true }

// Ready is nil: there is nothing to wait for.
func (endedSubscription) Ready() <-chan struct{} { return nil }

// subscribe returns the current task, its sequence number and a
// subscription to every later event; the subscription ends once the run
// finishes.
func (r *run) subscribe() (a2a.Task, uint64, store.Subscription) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq, sub := r.subscribeLocked()
	return cloneTask(&r.task), seq, sub
}

// subscribeLive is subscribe for SubscribeToTask: ok is false (and nothing
// is registered) once the run's final state is decided, when the caller
// must wait for done and read the stored task instead.
func (r *run) subscribeLive() (a2a.Task, uint64, store.Subscription, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized || r.finished {
		return a2a.Task{}, 0, nil, false
	}
	seq, sub := r.subscribeLocked()
	return cloneTask(&r.task), seq, sub, true
}

// resumeLive is subscribeLive for a stream resumed after event after
// (RPC-17): the events the log holds after it, then the live ones, and no
// snapshot (snap nil). When the log no longer holds them, the current
// snapshot (at seq) comes first instead.
func (r *run) resumeLive(after uint64) (snap *a2a.Task, seq uint64, sub store.Subscription, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized || r.finished {
		return nil, 0, nil, false
	}
	if sub, err := r.log.Subscribe(after); err == nil {
		return nil, after, sub, true
	}
	t := cloneTask(&r.task)
	seq, sub = r.subscribeLocked()
	return &t, seq, sub, true
}

// unsubscribe ends sub, a subscription to the run's events.
func (r *run) unsubscribe(sub store.Subscription) {
	if sub != nil {
		sub.Close()
	}
}

// finish ends every subscription (after it drains) and marks the run done.
// The turn's max_turns count is given back before done closes: a blocking
// SendMessage answers when done closes, and its caller may send the next
// message at once (AUTH-6).
func (r *run) finish() {
	r.mu.Lock()
	r.finished = true
	r.log.Close()
	r.mu.Unlock()
	if r.release != nil {
		r.release()
	}
	close(r.done)
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
