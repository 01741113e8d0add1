package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Context leases across instances (SCALE-3): with a shared store the busy
// flag of a context is also a lease in the store, taken after the
// in-process flag, renewed while the turn runs and released at its end.
// A single-process store (SQLite) has no Capabilities.Leaser: the
// in-process flag alone serialises the turns, as before.
const (
	// contextLeaseTTL is how long a lease outlives a holder that died.
	contextLeaseTTL = 30 * time.Second
	// contextLeasePoll is how often a message waiting for a context
	// leased by another instance tries again (context_wait bounds it).
	contextLeasePoll = 20 * time.Millisecond
)

// leaseShared takes the store's lease of c until the deadline until.
// ok is false when another instance holds it all along (or the store
// failed: failed is set then). release ends the renewals and gives the
// lease up; it is a no-op for local leases (l is then nil).
func (s *Service) leaseShared(ctx context.Context, c *convContext, until time.Time) (l store.ContextLease, release func(), ok, failed bool) {
	leaser := s.st.caps().Leaser
	if leaser == nil {
		return nil, func() {}, true, false
	}
	for {
		l, got, err := s.tryLease(ctx, leaser, c)
		if err != nil {
			s.cfg.Logger.Error("leasing context", errField(err))
			return nil, nil, false, true
		}
		if got {
			if !c.fresh.Swap(false) {
				s.refreshSession(ctx, c)
			}
			return l, s.keepLease(l), true, false
		}
		wait := time.Until(until)
		if wait <= 0 {
			return nil, nil, false, false
		}
		t := time.NewTimer(min(wait, contextLeasePoll))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, false, false
		}
	}
}

// tryLease takes c's shared lease once. The record of a context minted
// for this turn is stored with it, in one round trip (issue 32).
func (s *Service) tryLease(ctx context.Context, leaser store.ContextLeaser, c *convContext) (store.ContextLease, bool, error) {
	op := s.st.caps().Opener
	if c.pending == nil || op == nil {
		return leaser.TryLeaseContext(ctx, c.key.owner, c.key.id, contextLeaseTTL)
	}
	l, created, got, err := op.CreateAndLeaseContext(context.WithoutCancel(ctx), *c.pending, contextLeaseTTL)
	if err == nil {
		c.pending = nil
		if !created {
			c.fresh.Store(false) // another instance stored it: reload its state
		}
	}
	return l, got, err
}

// refreshSession reloads the backend state another instance may have
// changed since this one last ran the context.
func (s *Service) refreshSession(ctx context.Context, c *convContext) {
	rec, err := s.st.GetContext(ctx, c.key.owner, c.key.id)
	if err == nil {
		c.session.State = rec.State
	} else if !errors.Is(err, store.ErrNotFound) {
		s.cfg.Logger.Warn("reloading context state", errField(err))
	}
}

// keepLease renews l every third of its TTL until the returned release
// is called, which stops the renewals and releases the lease.
func (s *Service) keepLease(l store.ContextLease) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(contextLeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), contextLeaseTTL/3)
				held, err := l.Renew(ctx, contextLeaseTTL)
				cancel()
				if err != nil || !held {
					s.cfg.Logger.Warn("context lease lost while the turn runs", zap.Bool("expired", !held), zap.Error(err))
				}
			}
		}
	}()
	return func() {
		close(stop)
		wg.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := l.Release(ctx); err != nil {
			s.cfg.Logger.Warn("releasing context lease", errField(err))
		}
	}
}

// awaitRemoteTurn handles a follow-up of a task that a shared store says
// is running but this instance is not running (SCALE-3): it waits up to
// context_wait for the turn on the other instance to end and returns the
// task as it then is, or refuses with "Task is already working.". With a
// single-instance store it returns t.
func (s *Service) awaitRemoteTurn(ctx context.Context, owner string, t *a2a.Task) (*a2a.Task, error) {
	if s.st.caps().Shared == nil {
		return t, nil
	}
	deadline := time.Now().Add(s.cfg.ContextWait)
	for t.Status.State == a2a.TaskStateSubmitted || t.Status.State == a2a.TaskStateWorking {
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msgAlreadyWorking, Metadata: map[string]string{"taskId": t.ID}}
		}
		timer := time.NewTimer(min(wait, contextLeasePoll))
		select {
		case <-timer.C:
		case <-ctx.Done():
			timer.Stop()
			return nil, ctx.Err()
		}
		cur, err := s.st.GetTask(ctx, owner, t.ID)
		if err != nil {
			s.cfg.Logger.Error("reading task", errField(err))
			return nil, a2a.ErrInternal()
		}
		t = cur
	}
	return t, nil
}
