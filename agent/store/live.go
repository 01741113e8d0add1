package store

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SharedEvents is the optional part of an EventStore shared by several
// gateway instances (SCALE-1; Redis implements it, SQLite does not): the
// log is written at once, so an instance can follow the events of a turn
// running on another one, and a cancel can be sent to whichever instance
// runs a task's turn. The runtime finds it in Capabilities.Shared; when
// it is set, a turn's events are written to the log at once from the
// moment other instances can see the task.
type SharedEvents interface {
	EventStore
	// LiveEvents follows the task's log from after on: Next returns each
	// event with a sequence number above after, in order, as it is
	// appended (by any instance), each once. Next blocks in bounded steps
	// (at most LiveBlock each), so a canceled ctx is noticed within one;
	// it is false when ctx ends (the subscription stays usable), after
	// Close, or once reading the log failed (the subscription has ended).
	LiveEvents(ctx context.Context, taskID string, after uint64) (Subscription, error)
	// PublishCancel asks every instance to cancel the turn of taskID it
	// runs (none of them may).
	PublishCancel(ctx context.Context, taskID string) error
	// CancelRequests delivers the task ids of PublishCancel calls (of any
	// instance) until ctx ends or the store closes; then the channel is
	// closed. Slow readers lose requests rather than block the store.
	CancelRequests(ctx context.Context) (<-chan string, error)
	// PutFinalIfRunning writes t, a final state, with its push jobs
	// (payload as PutTaskWithJobs) only while the stored task is still
	// SUBMITTED or WORKING, and seals it: later writes of the task are
	// refused with ErrTaskReaped, so the turn of an instance that did not
	// stop cannot overwrite it. ErrTaskReaped when the task had left
	// those states already.
	PutFinalIfRunning(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error)
}
