package store

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// errNoPush is returned by Deferred.Push when the opened store keeps no
// push configs.
var errNoPush = errors.New("the task store keeps no push configs")

// Push returns the push store of the store d opens, for the push queue,
// which is built (and holds it) before Open: each call waits for Open (or
// its context), then goes to the open store's Capabilities.Push. It is the
// one part of a Deferred that forwards.
func (d *Deferred) Push() PushStore { return deferredPush{d} }

// deferredPush is Deferred.Push.
type deferredPush struct{ d *Deferred }

var _ PushStore = deferredPush{}

// get waits for the open store's push store.
func (p deferredPush) get(ctx context.Context) (PushStore, error) {
	if err := p.d.Wait(ctx); err != nil {
		return nil, err
	}
	if ps := p.d.Capabilities().Push; ps != nil {
		return ps, nil
	}
	return nil, errNoPush
}

// PutPushConfig implements PushStore.
func (p deferredPush) PutPushConfig(ctx context.Context, c PushConfig) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.PutPushConfig(ctx, c)
}

// PutPushConfigMax implements PushStore.
func (p deferredPush) PutPushConfigMax(ctx context.Context, c PushConfig, maxPerTask int) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.PutPushConfigMax(ctx, c, maxPerTask)
}

// GetPushConfig implements PushStore.
func (p deferredPush) GetPushConfig(ctx context.Context, owner, taskID, id string) (*PushConfig, error) {
	s, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.GetPushConfig(ctx, owner, taskID, id)
}

// ListPushConfigs implements PushStore.
func (p deferredPush) ListPushConfigs(ctx context.Context, owner, taskID, after string, limit int) ([]PushConfig, error) {
	s, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListPushConfigs(ctx, owner, taskID, after, limit)
}

// DeletePushConfig implements PushStore.
func (p deferredPush) DeletePushConfig(ctx context.Context, owner, taskID, id string) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.DeletePushConfig(ctx, owner, taskID, id)
}

// PutTaskWithJobs implements PushStore.
func (p deferredPush) PutTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	s, err := p.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.PutTaskWithJobs(ctx, owner, t, payload)
}

// ClaimPushJobs implements PushStore.
func (p deferredPush) ClaimPushJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error) {
	s, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ClaimPushJobs(ctx, now, lease, limit)
}

// AckPushJobs implements PushStore.
func (p deferredPush) AckPushJobs(ctx context.Context, ids ...string) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.AckPushJobs(ctx, ids...)
}

// RetryPushJob implements PushStore.
func (p deferredPush) RetryPushJob(ctx context.Context, id string, attempts int, due time.Time, lastErr string) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.RetryPushJob(ctx, id, attempts, due, lastErr)
}

// DeadPushJob implements PushStore.
func (p deferredPush) DeadPushJob(ctx context.Context, id string, attempts int, reason string) error {
	s, err := p.get(ctx)
	if err != nil {
		return err
	}
	return s.DeadPushJob(ctx, id, attempts, reason)
}

// ReleasePushLeases implements PushStore.
func (p deferredPush) ReleasePushLeases(ctx context.Context) (int, error) {
	s, err := p.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.ReleasePushLeases(ctx)
}

// PushQueueDepth implements PushStore.
func (p deferredPush) PushQueueDepth(ctx context.Context) (int, error) {
	s, err := p.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.PushQueueDepth(ctx)
}

// ListDeadPushJobs implements PushStore.
func (p deferredPush) ListDeadPushJobs(ctx context.Context, limit int) ([]DeadPushJob, error) {
	s, err := p.get(ctx)
	if err != nil {
		return nil, err
	}
	return s.ListDeadPushJobs(ctx, limit)
}

// RequeueDeadPushJobs implements PushStore.
func (p deferredPush) RequeueDeadPushJobs(ctx context.Context, id string) (int, error) {
	s, err := p.get(ctx)
	if err != nil {
		return 0, err
	}
	return s.RequeueDeadPushJobs(ctx, id)
}
