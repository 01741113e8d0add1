package store

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Event is one event of a task as its event log carries it.
type Event struct {
	// Seq is the event's position in its task's log: strictly increasing,
	// by one, over every event of the task, across its turns (RPC-17: the
	// SSE id of the event).
	Seq uint64
	// Response is the event as the streams send it.
	Response a2a.StreamResponse
}

// LogOptions is how EventBus.Open opens the log of one turn.
type LogOptions struct {
	// After is the sequence number of the task's last event before the
	// turn (EventStore.LastEventSeq): the turn's first event gets After+1.
	After uint64
	// Keep is how many of the task's latest events the log holds for
	// Subscribe to replay (event_log_size); <= 0 is DefaultEventLogSize.
	Keep int
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
// opens one EventLog per turn; the implementation is LocalBus.
// Implementations are safe for concurrent use. The runtime finds a task's
// open log through its own table of running turns; a turn running on
// another instance (SCALE-1) is followed through the store's shared log
// instead (SharedEvents: the Redis stream per task, which LocalBus writes
// every event to at once, and a cancel channel).
type EventBus interface {
	// Open opens the log of a new turn of task taskID, numbering its
	// events from o.After+1, and returns it with the context the turn runs
	// under. That context is never canceled but
	// by EventLog.Cancel (from any holder of the log; with a Redis bus,
	// from any instance), whose cause it then carries.
	Open(taskID string, o LogOptions) (EventLog, context.Context)
}

// EventLog is the ordered log of one turn's events of one task, in the
// task's numbering (RPC-17). The turn engine is its only writer and
// serialises its calls to Publish and Subscribe with its own lock (the lock
// that guards its Task snapshot), so a subscriber's starting snapshot and
// its first event always agree.
type EventLog interface {
	// Publish appends ev and delivers it to every subscription, and
	// returns its sequence number. Every subscription gets the events in
	// the order they were published, each at most once (a Redis
	// implementation must deduplicate redelivered entries by Seq).
	// After Close, Publish drops ev and returns the last sequence number.
	Publish(ev a2a.StreamResponse) uint64
	// Last returns the sequence number of the last event published, or
	// LogOptions.After when none was.
	Last() uint64
	// Subscribe returns a subscription to every event with a sequence
	// number above after: first the held events after after (of this turn
	// and, from the task's stored log, of earlier turns of the task), then
	// the live ones, without gap or duplicate. after == Last() is "from
	// now" and always succeeds; an after whose next event the log no
	// longer holds (or a future one) is ErrEventsGone. After Close the
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
	// Watch stores the events held so far and every later one, as a
	// subscription would, in a log that stores an unwatched turn's events
	// lazily (LocalBus); other logs store every event already.
	Watch()
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
	// Buffered tells whether Next would wait, and Ready lets the reader
	// wait without Next; a subscription that cannot tell says false and
	// nil (the reader waits in Next).
	Buffered
}
