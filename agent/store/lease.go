package store

import (
	"context"
	"errors"
	"time"
)

// ErrLocalLeases is returned by a ContextLeaser whose store is not shared:
// the caller's in-process busy flag is the only lease (SQLite).
var ErrLocalLeases = errors.New("context leases are in-process")

// ContextLeaser is implemented by stores shared by several instances: the
// busy flag of a context is a lease in the store, so that one turn runs
// per context across instances (SCALE-3). The agent takes it after its
// in-process flag and holds it, renewed, while the turn runs.
type ContextLeaser interface {
	// TryLeaseContext takes the busy lease of the owner's context for ttl
	// when no one holds it: ok is false when another holder has it. err is
	// ErrLocalLeases when the store keeps no shared leases.
	TryLeaseContext(ctx context.Context, owner, id string, ttl time.Duration) (l ContextLease, ok bool, err error)
}

// ContextLease is a held context lease.
type ContextLease interface {
	// Renew extends the lease to ttl from now; false when it was lost
	// (expired and taken by another holder).
	Renew(ctx context.Context, ttl time.Duration) (bool, error)
	// Release gives the lease up if it is still held.
	Release(ctx context.Context) error
}

// TryLeaseContext forwards to the open store, or says ErrLocalLeases when
// it keeps no shared leases.
func (d *Deferred) TryLeaseContext(ctx context.Context, owner, id string, ttl time.Duration) (ContextLease, bool, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, false, err
	}
	if l, ok := s.(ContextLeaser); ok {
		return l.TryLeaseContext(ctx, owner, id, ttl)
	}
	return nil, false, ErrLocalLeases
}

// Shared is implemented by stores that can say whether several instances
// share them (the Redis store; Deferred forwards).
type Shared interface {
	// SharedAcrossInstances reports whether other instances may see and
	// change the same records.
	SharedAcrossInstances() bool
}

// SharedAcrossInstances reports whether the open store is shared (false
// before Open).
func (d *Deferred) SharedAcrossInstances() bool {
	s, err := d.now()
	if err != nil {
		return false
	}
	sh, ok := s.(Shared)
	return ok && sh.SharedAcrossInstances()
}

// ContextCreator is implemented by shared stores: a new context record is
// created only if no instance created it first, so that concurrent first
// messages on several instances agree on one workspace binding (INPUT-1,
// SCALE-1).
type ContextCreator interface {
	// CreateContext stores c unless (c.Owner, c.ID) exists; it returns the
	// record that is stored afterwards (c, or the existing one) and
	// whether this call created it. ErrLocalLeases when the store is not
	// shared (the in-process context table serialises creation).
	CreateContext(ctx context.Context, c ContextRecord) (*ContextRecord, bool, error)
}

// CreateContext forwards to the open store (ErrLocalLeases when it is
// not shared).
func (d *Deferred) CreateContext(ctx context.Context, c ContextRecord) (*ContextRecord, bool, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, false, err
	}
	if cc, ok := s.(ContextCreator); ok {
		return cc.CreateContext(ctx, c)
	}
	return nil, false, ErrLocalLeases
}
