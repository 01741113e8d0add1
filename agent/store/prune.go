package store

import (
	"context"
	"time"
)

// PruneOptions says what a retention pass removes (OPS-5). A zero cut-off
// keeps that kind of record.
type PruneOptions struct {
	// TasksBefore removes tasks whose last status change is older, with
	// their push configs and pending deliveries. Tasks that are running
	// (SUBMITTED, WORKING) are never removed.
	TasksBefore time.Time
	// ContextsBefore removes contexts (workspace binding, backend session
	// state) not updated since.
	ContextsBefore time.Time
	// DeadBefore removes dead letters older than this.
	DeadBefore time.Time
	// Batch is how many records one write transaction removes, so the
	// writer is never held long. Default 500.
	Batch int
	// DryRun counts what would be removed and removes nothing.
	DryRun bool
	// OnTasks, when set, is called with the ids of each batch of removed
	// (or, with DryRun, removable) tasks, e.g. to remove their stored
	// input files.
	OnTasks func(ids []string)
}

// PruneResult counts what a pass removed (or, with DryRun, would remove).
type PruneResult struct {
	// Tasks, Contexts and DeadLetters are the records removed.
	Tasks, Contexts, DeadLetters int
	// SharedArtifacts are the artifact payloads removed from a shared
	// store (Redis) because no turn stored them since TasksBefore.
	SharedArtifacts int
}

// Pruner is implemented by stores that can remove old records in small
// batches (the SQLite store; a Redis store expires keys instead).
type Pruner interface {
	// Prune runs one retention pass. It stops early, with what it did so
	// far, when ctx ends.
	Prune(ctx context.Context, opts PruneOptions) (PruneResult, error)
}
