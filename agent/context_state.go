package agent

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// contextFor returns the live context, reviving it from the store (or
// creating it, bound to cwd) when it is not in memory, and the workspace
// it is bound to. Concurrent first messages of a context agree on one
// binding: the creator reads or writes the store while the others wait
// for it. minted says the id was generated for this turn (no record can
// exist: the store is not read).
func (s *Service) contextFor(ctx context.Context, owner, id, cwd string, minted bool) (*convContext, string) {
	key := ctxKey{owner: owner, id: id}
	c, created := s.hub.contexts.get(key, func() *convContext {
		return &convContext{backend: s.cfg.Backend, ready: make(chan struct{})}
	})
	if !created {
		<-c.ready
		return c, c.cwd
	}
	bound := cwd
	var rec *store.ContextRecord
	err := store.ErrNotFound
	if !minted {
		rec, err = s.st.GetContext(ctx, owner, id)
	}
	switch {
	case err == nil:
		bound = rec.Cwd
		c.session.State = rec.State
	case errors.Is(err, store.ErrNotFound):
		now := time.Now()
		rec := store.ContextRecord{Owner: owner, ID: id, Cwd: cwd, CreatedAt: now, UpdatedAt: now}
		if minted && s.st.caps().Opener != nil {
			c.pending = &rec // stored with the turn's lease (leaseShared)
		} else if got, ok := s.createShared(ctx, rec); ok {
			bound = got.Cwd // another instance may have bound it first
			c.session.State = got.State
		} else if err := s.putContextSoon(ctx, rec); err != nil {
			s.cfg.Logger.Error("storing context", errField(err))
		}
	default:
		s.cfg.Logger.Error("reading context", errField(err))
	}
	c.cwd = bound
	c.fresh.Store(true)
	close(c.ready)
	return c, c.cwd
}

// boundCwd returns the workspace the context id of owner is bound to: the
// live context's, else the stored record's (so the binding survives
// eviction and restarts). ok is false for a context with no binding yet
// (or when the store cannot say: the turn's contextFor decides then).
func (s *Service) boundCwd(ctx context.Context, owner, id string) (string, bool) {
	if id == "" {
		return "", false
	}
	if c, ok := s.hub.contexts.peek(ctxKey{owner: owner, id: id}); ok {
		select {
		case <-c.ready:
			return c.cwd, c.cwd != ""
		case <-ctx.Done():
			return "", false
		}
	}
	rec, err := s.st.GetContext(ctx, owner, id)
	if err != nil || rec.Cwd == "" {
		return "", false
	}
	return rec.Cwd, true
}

// saveSessionState stores the backend state of a context with its record.
func (s *Service) saveSessionState(ctx context.Context, owner, id string, c *convContext) {
	now := time.Now()
	rec := store.ContextRecord{Owner: owner, ID: id, Cwd: c.cwd, CreatedAt: now, UpdatedAt: now, State: c.session.State}
	if old, err := s.st.GetContext(context.WithoutCancel(ctx), owner, id); err == nil {
		rec.CreatedAt = old.CreatedAt
	}
	if err := s.st.PutContext(context.WithoutCancel(ctx), rec); err != nil {
		s.cfg.Logger.Error("storing context state", errField(err))
	}
}

// putContextSoon stores a new context record without waiting for the
// commit when the store allows it: losing it in a crash only unbinds the
// workspace, and the turn's final write commits it anyway.
func (s *Service) putContextSoon(ctx context.Context, rec store.ContextRecord) error {
	if nw := s.st.caps().NoWait; nw != nil {
		return nw.PutContextNoWait(rec)
	}
	return s.st.PutContext(context.WithoutCancel(ctx), rec)
}

// createShared creates the context record in a shared store unless
// another instance created it first, and returns the stored record; ok is
// false when the store is not shared (or failed: then the record is
// written as before).
func (s *Service) createShared(ctx context.Context, rec store.ContextRecord) (*store.ContextRecord, bool) {
	cc := s.st.caps().Creator
	if cc == nil {
		return nil, false
	}
	got, _, err := cc.CreateContext(context.WithoutCancel(ctx), rec)
	if err != nil {
		s.cfg.Logger.Error("creating context", errField(err))
		return nil, false
	}
	return got, true
}
