package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// ErrNotOpen is returned by the Store of a Deferred that is not open yet.
var ErrNotOpen = errors.New("store not open yet")

// Deferred is a store that is handed out before it is opened (OPS-6): the
// a2a app builds its runtime over it when a configuration is provisioned —
// also by `caddy validate`, which must not touch the data directory — and
// opens the real store only when the configuration starts, under the data
// directory's lock. Open resolves the store's Capabilities once; the
// runtime reads them from then on, after waiting for Open with Wait.
// Nothing is forwarded but the push store (Push), which the push queue
// holds from before Open.
type Deferred struct {
	ready chan struct{} // closed by the first Open, Fail or Close
	once  sync.Once
	caps  *Capabilities // set before ready is closed; nil on failure
	err   error         // why caps is nil
	mu    sync.Mutex
	done  bool // Close was called
}

// NewDeferred returns a store that is not open yet.
func NewDeferred() *Deferred { return &Deferred{ready: make(chan struct{})} }

// Open makes s the store behind d and resolves its Capabilities; calls
// waiting for d go on. It fails (and closes nothing) when d was already
// opened, failed or closed.
func (d *Deferred) Open(s Capable) error {
	ok := false
	d.once.Do(func() {
		c := s.Capabilities()
		d.caps, ok = &c, true
		close(d.ready)
	})
	if !ok {
		return errors.New("store: deferred store already settled")
	}
	return nil
}

// Fail settles d without a store: waiting and later calls return err.
func (d *Deferred) Fail(err error) {
	d.once.Do(func() {
		d.err = err
		close(d.ready)
	})
}

// Wait blocks until d is opened (nil), failed or closed (the error), or
// ctx ends.
func (d *Deferred) Wait(ctx context.Context) error {
	select {
	case <-d.ready:
		return d.err
	default:
	}
	select {
	case <-d.ready:
		return d.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Capabilities returns what the open store can do (shared: not to be
// changed). Before Open, or when d failed or closed before it, it holds
// no optional part and a Store that answers ErrNotOpen (or why d failed):
// callers wait for Open with Wait first.
func (d *Deferred) Capabilities() *Capabilities {
	select {
	case <-d.ready:
		if d.caps != nil {
			return d.caps
		}
		return &Capabilities{Store: unopened{d.err}}
	default:
		return &notOpen
	}
}

var notOpen = Capabilities{Store: unopened{ErrNotOpen}}

// Close closes the store behind d, if it was opened; calls still waiting
// fail with ErrClosed.
func (d *Deferred) Close() error {
	d.Fail(ErrClosed)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.caps == nil {
		d.done = true
		return nil
	}
	d.done = true
	return d.caps.Store.Close()
}

// unopened is the Store of a Deferred that has none: every call fails
// with err, and there is nothing to recover.
type unopened struct{ err error }

// PutTask fails.
func (u unopened) PutTask(context.Context, string, *a2a.Task) error { return u.err }

// GetTask fails.
func (u unopened) GetTask(context.Context, string, string) (*a2a.Task, error) {
	return nil, u.err
}

// ListTasks fails.
func (u unopened) ListTasks(context.Context, ListQuery) (ListResult, error) {
	return ListResult{}, u.err
}

// FailInterrupted has nothing to recover: the opener recovers, under the
// data directory's lock.
func (u unopened) FailInterrupted(context.Context, string, time.Time) (int, error) { return 0, nil }

// PutContext fails.
func (u unopened) PutContext(context.Context, ContextRecord) error { return u.err }

// GetContext fails.
func (u unopened) GetContext(context.Context, string, string) (*ContextRecord, error) {
	return nil, u.err
}

// Close has nothing to close.
func (u unopened) Close() error { return nil }
