package store

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Event is one event of a task as its event log carries it.
type Event struct {
	// Seq is the event's position in its task's log: strictly increasing,
	// by one, over the events of one log (RPC-17 will send it as the SSE
	// id; nothing sends it yet).
	Seq uint64
	// Response is the event as the streams send it.
	Response a2a.StreamResponse
}

// ErrEventsGone is returned by EventLog.Subscribe when the events after the
// requested sequence number are no longer (or were never) held by the log:
// the caller reads the task's current snapshot and subscribes from there.
var ErrEventsGone = errors.New("events no longer held by the log")

// MaxQueuedEvents bounds the events delivered to one subscription and not
// yet taken by its reader. A reader that falls this far behind is
// disconnected (its subscription ends, see Subscription.Next) instead of
// buffering a whole turn's output in memory.
const MaxQueuedEvents = 8192

// EventBus fans the events of running turns out to the streams of their
// tasks (SendStreamingMessage, SubscribeToTask: RPC-11). The turn engine
// opens one EventLog per turn; the in-process implementation is LocalBus,
// a Redis one keeps a stream per task and a control channel for cancels.
// Implementations are safe for concurrent use. Today the runtime finds a
// task's open log through its own table of running turns (one process);
// reaching the log of a turn running on another instance (SCALE-1) adds a
// lookup by task id with the Redis bus.
type EventBus interface {
	// Open opens the log of a new turn of task taskID and returns it with
	// the context the turn runs under. That context is never canceled but
	// by EventLog.Cancel (from any holder of the log; with a Redis bus,
	// from any instance), whose cause it then carries.
	Open(taskID string) (EventLog, context.Context)
}

// EventLog is the ordered log of one turn's events of one task. The turn
// engine is its only writer and serialises its calls to Publish and
// Subscribe with its own lock (the lock that guards its Task snapshot), so
// a subscriber's starting snapshot and its first event always agree.
type EventLog interface {
	// Publish appends ev and delivers it to every subscription, and
	// returns its sequence number. Every subscription gets the events in
	// the order they were published, each at most once (a Redis
	// implementation must deduplicate redelivered entries by Seq).
	// After Close, Publish drops ev and returns the last sequence number.
	Publish(ev a2a.StreamResponse) uint64
	// Last returns the sequence number of the last event published (0 when
	// none was).
	Last() uint64
	// Subscribe returns a subscription to every event with a sequence
	// number above after. after == Last() is "from now" and always
	// succeeds; an after the log no longer holds events for is
	// ErrEventsGone (the in-process log holds none: it only delivers
	// events published after Subscribe returns). After Close the
	// subscription gets the events that were still held, then ends.
	Subscribe(after uint64) (Subscription, error)
	// Cancel asks the turn writing the log to stop: the context Open
	// returned ends with cause (the first cause wins). It does not close
	// the log: the turn publishes its final events and closes it itself.
	Cancel(cause error)
	// Close ends the log: every subscription ends once its reader has
	// taken the events already delivered to it. Later Publish calls are
	// dropped. Close does not cancel the turn's context. Idempotent.
	Close()
}

// Subscription is one stream's view of an EventLog: a queue of events
// bounded at MaxQueuedEvents. It is read by one goroutine; Close may be
// called from any.
type Subscription interface {
	// Next returns the next event in order. ok is false once the log was
	// closed and every event delivered was taken, after Close, when the
	// reader fell MaxQueuedEvents behind (the queued events are dropped),
	// or when ctx ends (then the subscription stays usable).
	Next(ctx context.Context) (ev Event, ok bool)
	// Close unsubscribes: no more events are delivered, the queued ones
	// are dropped and Next reports false. Idempotent.
	Close()
}
