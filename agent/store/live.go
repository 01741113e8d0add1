package store

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SharedEvents is the optional part of an EventStore shared by several
// gateway instances (SCALE-1; Redis implements it, SQLite does not): the
// log is written at once, so an instance can follow the events of a turn
// running on another one, and a cancel can be sent to whichever instance
// runs a task's turn. The runtime finds it by a type assertion on its
// Store and uses it only while SharesEvents is true.
type SharedEvents interface {
	EventStore
	// SharesEvents reports whether the methods below work (a Deferred:
	// whether the store it opened does). While it is true, the event bus
	// writes every event of every turn to the log at once.
	SharesEvents() bool
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

// ErrNotShared is returned by the SharedEvents methods of a store whose
// events are not shared (a Deferred over SQLite).
var ErrNotShared = errors.New("store does not share events across instances")

var _ SharedEvents = (*Deferred)(nil)

// SharesEvents forwards to the open store (false before Open).
func (d *Deferred) SharesEvents() bool {
	s, err := d.now()
	if err != nil {
		return false
	}
	se, ok := s.(SharedEvents)
	return ok && se.SharesEvents()
}

// shared returns the open store's SharedEvents.
func (d *Deferred) shared(ctx context.Context) (SharedEvents, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	se, ok := s.(SharedEvents)
	if !ok || !se.SharesEvents() {
		return nil, ErrNotShared
	}
	return se, nil
}

// LiveEvents forwards to the open store.
func (d *Deferred) LiveEvents(ctx context.Context, taskID string, after uint64) (Subscription, error) {
	se, err := d.shared(ctx)
	if err != nil {
		return nil, err
	}
	return se.LiveEvents(ctx, taskID, after)
}

// PublishCancel forwards to the open store.
func (d *Deferred) PublishCancel(ctx context.Context, taskID string) error {
	se, err := d.shared(ctx)
	if err != nil {
		return err
	}
	return se.PublishCancel(ctx, taskID)
}

// CancelRequests forwards to the open store (waiting for it to open).
func (d *Deferred) CancelRequests(ctx context.Context) (<-chan string, error) {
	se, err := d.shared(ctx)
	if err != nil {
		return nil, err
	}
	return se.CancelRequests(ctx)
}

// PutFinalIfRunning forwards to the open store.
func (d *Deferred) PutFinalIfRunning(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	se, err := d.shared(ctx)
	if err != nil {
		return 0, err
	}
	return se.PutFinalIfRunning(ctx, owner, t, payload)
}
