package store

// Capabilities is what one open store can do, resolved once, when it
// opens: the runtime reads these fields and never asks the store by a
// type assertion. Store is always set; each optional part is set when the
// store has it and nil when it does not.
type Capabilities struct {
	// Store keeps tasks and contexts (always set).
	Store Store
	// NoWait queues writes without waiting for them to be durable.
	NoWait NoWaitWriter
	// Push keeps push configs and the push outbox (PUSH-1…8).
	Push PushStore
	// Events is the task event log of resumable streams (RPC-17).
	Events EventStore
	// Sent remembers sent message ids (RPC-18).
	Sent SentMessageStore
	// Shared is set when several instances share the store (SCALE-1): it
	// then shares the event log and carries cancels between instances.
	// It is the one answer to "is this store shared".
	Shared SharedEvents
	// Leaser takes per-context busy leases across instances (SCALE-3).
	Leaser ContextLeaser
	// Creator creates context records once across instances.
	Creator ContextCreator
	// Opener creates a context record and takes its lease in one round
	// trip (a turn in a context minted for it).
	Opener ContextOpener
	// FinalRelease gives a turn's context lease up with the write of its
	// final state.
	FinalRelease FinalReleaser
	// Blobs keeps artifact payloads for every instance.
	Blobs BlobStore
	// Pruner runs retention passes (OPS-5).
	Pruner Pruner
	// Checker answers the readiness probe: can the store serve now (OPS-8).
	Checker Checker
	// Lease reports whether this instance's heartbeat lease is current
	// (SCALE-2, OPS-8); set by stores that hold one.
	Lease LeaseChecker
}

// Capable is a store that says what it can do: SQLite and Redis. Deferred
// takes one when it opens; the runtime is built over one.
type Capable interface {
	// Capabilities returns the store's parts; it is called once, when the
	// runtime (or a Deferred) takes the store.
	Capabilities() Capabilities
}

// Capabilities implements Capable: tasks, contexts, no-wait writes, push,
// the event log, sent messages and pruning; nothing shared.
func (s *SQLite) Capabilities() Capabilities {
	return Capabilities{Store: s, NoWait: s, Push: s, Events: s, Sent: s, Pruner: s, Checker: s}
}

// Capabilities implements Capable: every part, shared across instances.
func (s *Redis) Capabilities() Capabilities {
	c := Capabilities{Store: s, NoWait: s, Push: s, Events: s, Sent: s, Pruner: s,
		Shared: s, Leaser: s, Creator: s, Opener: s, FinalRelease: s, Blobs: s, Checker: s}
	if s.inst != nil {
		c.Lease = s
	}
	return c
}

var (
	_ Capable = (*SQLite)(nil)
	_ Capable = (*Redis)(nil)
)
