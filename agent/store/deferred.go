package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// FullStore is what Deferred forwards to, and so what it implements itself:
// every narrow interface of the package (TaskStore, ContextStore,
// NoWaitWriter, PushConfigStore, Outbox) and Close. *SQLite is one.
type FullStore interface {
	Store
	NoWaitWriter
	PushStore
}

var _ FullStore = (*SQLite)(nil)

// ErrNotOpen is returned by a Deferred store used before it was opened
// without a context to wait with (the no-wait writes).
var ErrNotOpen = errors.New("store not open yet")

// Deferred is a store that is handed out before it is opened (OPS-6): the
// a2a app builds its runtime over it when a configuration is provisioned —
// also by `caddy validate`, which must not touch the data directory — and
// opens the real store only when the configuration starts, under the data
// directory's lock. Calls made before Open wait for it (or for their
// context); after a failed Open or Close they fail.
type Deferred struct {
	ready chan struct{} // closed by the first Open, Fail or Close
	once  sync.Once
	s     FullStore // set before ready is closed; nil on failure
	err   error     // why s is nil
	mu    sync.Mutex
	done  bool // Close was called
}

// NewDeferred returns a store that is not open yet.
func NewDeferred() *Deferred { return &Deferred{ready: make(chan struct{})} }

var _ FullStore = (*Deferred)(nil)

// Open makes s the store behind d; calls waiting for d go on. It fails
// (and closes nothing) when d was already opened, failed or closed.
func (d *Deferred) Open(s FullStore) error {
	ok := false
	d.once.Do(func() {
		d.s, ok = s, true
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

// Opened reports whether Open was called.
func (d *Deferred) Opened() bool {
	select {
	case <-d.ready:
		return d.s != nil
	default:
		return false
	}
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

func (d *Deferred) get(ctx context.Context) (FullStore, error) {
	if err := d.Wait(ctx); err != nil {
		return nil, err
	}
	return d.s, nil
}

func (d *Deferred) now() (FullStore, error) {
	select {
	case <-d.ready:
		return d.s, d.err
	default:
		return nil, ErrNotOpen
	}
}

// Close closes the store behind d, if it was opened; calls still waiting
// fail with ErrClosed.
func (d *Deferred) Close() error {
	d.Fail(ErrClosed)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done || d.s == nil {
		d.done = true
		return nil
	}
	d.done = true
	return d.s.Close()
}

// FailInterrupted forwards to the open store. Before Open it does nothing
// and returns 0: the opener runs crash recovery itself, once it holds the
// data directory (so that a runtime built over d at provisioning time,
// which recovers on creation, never recovers a directory it does not own).
func (d *Deferred) FailInterrupted(ctx context.Context, msg string, now time.Time) (int, error) {
	s, err := d.now()
	if err != nil {
		if errors.Is(err, ErrNotOpen) {
			return 0, nil
		}
		return 0, err
	}
	return s.FailInterrupted(ctx, msg, now)
}

// PutTask forwards to the open store.
func (d *Deferred) PutTask(ctx context.Context, owner string, t *a2a.Task) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.PutTask(ctx, owner, t)
}

// GetTask forwards to the open store.
func (d *Deferred) GetTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.GetTask(ctx, owner, id)
}

// ListTasks forwards to the open store.
func (d *Deferred) ListTasks(ctx context.Context, q ListQuery) (ListResult, error) {
	s, err := d.get(ctx)
	if err != nil {
		return ListResult{}, err
	}
	return s.ListTasks(ctx, q)
}

// PutContext forwards to the open store.
func (d *Deferred) PutContext(ctx context.Context, c ContextRecord) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.PutContext(ctx, c)
}

// GetContext forwards to the open store.
func (d *Deferred) GetContext(ctx context.Context, owner, id string) (*ContextRecord, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.GetContext(ctx, owner, id)
}

// PutTaskNoWait forwards to the open store (ErrNotOpen before Open).
func (d *Deferred) PutTaskNoWait(owner string, t *a2a.Task) error {
	s, err := d.now()
	if err != nil {
		return err
	}
	return s.PutTaskNoWait(owner, t)
}

// PutContextNoWait forwards to the open store (ErrNotOpen before Open).
func (d *Deferred) PutContextNoWait(c ContextRecord) error {
	s, err := d.now()
	if err != nil {
		return err
	}
	return s.PutContextNoWait(c)
}

// PutPushConfig forwards to the open store.
func (d *Deferred) PutPushConfig(ctx context.Context, c PushConfig) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.PutPushConfig(ctx, c)
}

// PutPushConfigMax forwards to the open store.
func (d *Deferred) PutPushConfigMax(ctx context.Context, c PushConfig, maxPerTask int) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.PutPushConfigMax(ctx, c, maxPerTask)
}

// GetPushConfig forwards to the open store.
func (d *Deferred) GetPushConfig(ctx context.Context, owner, taskID, id string) (*PushConfig, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.GetPushConfig(ctx, owner, taskID, id)
}

// ListPushConfigs forwards to the open store.
func (d *Deferred) ListPushConfigs(ctx context.Context, owner, taskID, after string, limit int) ([]PushConfig, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListPushConfigs(ctx, owner, taskID, after, limit)
}

// DeletePushConfig forwards to the open store.
func (d *Deferred) DeletePushConfig(ctx context.Context, owner, taskID, id string) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.DeletePushConfig(ctx, owner, taskID, id)
}

// PutTaskWithJobs forwards to the open store.
func (d *Deferred) PutTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	s, err := d.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.PutTaskWithJobs(ctx, owner, t, payload)
}

// ClaimPushJobs forwards to the open store.
func (d *Deferred) ClaimPushJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ClaimPushJobs(ctx, now, lease, limit)
}

// AckPushJobs forwards to the open store.
func (d *Deferred) AckPushJobs(ctx context.Context, ids ...string) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.AckPushJobs(ctx, ids...)
}

// RetryPushJob forwards to the open store.
func (d *Deferred) RetryPushJob(ctx context.Context, id string, attempts int, due time.Time, lastErr string) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.RetryPushJob(ctx, id, attempts, due, lastErr)
}

// DeadPushJob forwards to the open store.
func (d *Deferred) DeadPushJob(ctx context.Context, id string, attempts int, reason string) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	return s.DeadPushJob(ctx, id, attempts, reason)
}

// ReleasePushLeases forwards to the open store.
func (d *Deferred) ReleasePushLeases(ctx context.Context) (int, error) {
	s, err := d.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.ReleasePushLeases(ctx)
}

// PushQueueDepth forwards to the open store.
func (d *Deferred) PushQueueDepth(ctx context.Context) (int, error) {
	s, err := d.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.PushQueueDepth(ctx)
}

// ListDeadPushJobs forwards to the open store.
func (d *Deferred) ListDeadPushJobs(ctx context.Context, limit int) ([]DeadPushJob, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListDeadPushJobs(ctx, limit)
}

// RequeueDeadPushJobs forwards to the open store.
func (d *Deferred) RequeueDeadPushJobs(ctx context.Context, id string) (int, error) {
	s, err := d.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.RequeueDeadPushJobs(ctx, id)
}

// ErrPruneUnsupported is returned by Deferred.Prune when the opened store
// cannot prune (it expires records itself, or keeps them).
var ErrPruneUnsupported = errors.New("the task store does not support pruning")

// Prune implements Pruner when the opened store does (OPS-5).
func (d *Deferred) Prune(ctx context.Context, opts PruneOptions) (PruneResult, error) {
	s, err := d.get(ctx)
	if err != nil {
		return PruneResult{}, err
	}
	p, ok := s.(Pruner)
	if !ok {
		return PruneResult{}, ErrPruneUnsupported
	}
	return p.Prune(ctx, opts)
}
