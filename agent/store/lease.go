package store

import (
	"context"
	"time"
)

// ContextLeaser is implemented by stores shared by several instances: the
// busy flag of a context is a lease in the store, so that one turn runs
// per context across instances (SCALE-3). The agent takes it after its
// in-process flag and holds it, renewed, while the turn runs. A store
// without it (SQLite) has no Capabilities.Leaser: the in-process flag is
// the only lease.
type ContextLeaser interface {
	// TryLeaseContext takes the busy lease of the owner's context for ttl
	// when no one holds it: ok is false when another holder has it.
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

// ContextCreator is implemented by shared stores: a new context record is
// created only if no instance created it first, so that concurrent first
// messages on several instances agree on one workspace binding (INPUT-1,
// SCALE-1).
type ContextCreator interface {
	// CreateContext stores c unless (c.Owner, c.ID) exists; it returns the
	// record that is stored afterwards (c, or the existing one) and
	// whether this call created it. A store without it (SQLite) has no
	// Capabilities.Creator: the in-process context table serialises creation.
	CreateContext(ctx context.Context, c ContextRecord) (*ContextRecord, bool, error)
}

// ContextOpener is implemented by shared stores that create a context
// record and take the context's busy lease in one round trip (issue 32):
// a turn in a context minted for it needs both at its start. A store
// without it has no Capabilities.Opener: the record is created when the
// context is, and the lease taken as ContextLeaser says.
type ContextOpener interface {
	// CreateAndLeaseContext stores c unless (c.Owner, c.ID) exists and
	// takes the context's busy lease for ttl when no one holds it, in one
	// atomic step. created says this call stored c; ok says it took the
	// lease (l is then the held lease).
	CreateAndLeaseContext(ctx context.Context, c ContextRecord, ttl time.Duration) (l ContextLease, created, ok bool, err error)
}

// FinalReleaser is implemented by stores that can give a context lease
// up within the write of a turn's final state (issue 32: no round trip
// of its own at a turn's end).
type FinalReleaser interface {
	// ReleaseWithFinalWrite makes this handle's next write of task
	// taskID in a state that ends a turn also release l, atomically with
	// the write; l's Release then sends nothing. Where a write cannot (a
	// Cluster: the lease is in another slot) it does nothing. l's Release
	// is still called after the write, and forgets the hand-over.
	ReleaseWithFinalWrite(l ContextLease, taskID string)
}
