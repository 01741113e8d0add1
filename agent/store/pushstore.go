package store

import (
	"context"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// PushConfig is a stored push notification config (PUSH-1). Token and
// Credentials hold values already sealed by the caller's key ring; the
// store never sees a plain secret.
type PushConfig struct {
	// Owner is the principal owning the task.
	Owner string
	// TaskID and ID identify the config.
	TaskID, ID string
	// URL is the callback.
	URL string
	// Token is the sealed notification token ("" = none).
	Token string
	// Scheme is the Authorization scheme ("" = none).
	Scheme string
	// Credentials are the sealed Authorization credentials.
	Credentials string
	// CreatedAt is when the config was first stored.
	CreatedAt time.Time
}

// PushJob is one delivery waiting in the outbox. Its secrets are sealed.
type PushJob struct {
	// ID is the stable delivery id.
	ID string
	// TaskID, ConfigID and Owner say which config it was made for.
	TaskID, ConfigID, Owner string
	// URL, Token, Scheme and Credentials are copied from the config when
	// the job was created.
	URL, Token, Scheme, Credentials string
	// Payload is the StreamResponse JSON to POST.
	Payload []byte
	// Attempts counts the attempts already made.
	Attempts int
	// Due is when the job may next be attempted.
	Due time.Time
	// LastError describes the last failed attempt.
	LastError string
	// CreatedAt is when the state change that made the job was stored.
	CreatedAt time.Time
	// TraceParent is the W3C traceparent of the turn that stored the
	// state change (from the span in PutTaskWithJobs' ctx), "" when none.
	TraceParent string
}

// DeadPushJob is a delivery that will not be retried any more.
type DeadPushJob struct {
	PushJob
	// Reason says why it died.
	Reason string
	// DeadAt is when it died.
	DeadAt time.Time
}

// PushConfigStore persists push notification configs (PUSH-1). Safe for
// concurrent use; reads and deletes with another owner behave as if the
// config did not exist.
type PushConfigStore interface {
	// PutPushConfig inserts or replaces the config (TaskID, ID).
	PutPushConfig(ctx context.Context, c PushConfig) error
	// PutPushConfigMax is PutPushConfig with a cap (PUSH-1): a config id
	// new to the task is refused with ErrPushConfigLimit when the task
	// already has maxPerTask configs; replacing an existing id is always
	// allowed. The count and the write are atomic, so concurrent creates
	// cannot exceed the cap (SQLite: one write transaction; Redis: a
	// script or MULTI/EXEC). maxPerTask <= 0: no cap.
	PutPushConfigMax(ctx context.Context, c PushConfig, maxPerTask int) error
	// GetPushConfig returns the owner's config, or ErrNotFound.
	GetPushConfig(ctx context.Context, owner, taskID, id string) (*PushConfig, error)
	// ListPushConfigs returns up to limit of the owner's configs of a task,
	// in id order, starting after the id after ("" = from the start).
	ListPushConfigs(ctx context.Context, owner, taskID, after string, limit int) ([]PushConfig, error)
	// DeletePushConfig removes a config and its pending deliveries. It
	// succeeds when there is none.
	DeletePushConfig(ctx context.Context, owner, taskID, id string) error
}

// Outbox is the transactional outbox of push deliveries (PUSH-4, PUSH-5)
// and its dead letters. A job is created atomically with the task state
// that triggers it and is delivered at least once: a claimed job whose
// lease expires (its deliverer died) is claimed again, so receivers
// deduplicate by the job's stable id.
type Outbox interface {
	// PutTaskWithJobs is TaskStore.PutTask that also inserts, atomically
	// with the task write, one delivery job per push config of the task,
	// each carrying payload. It returns how many jobs it queued.
	PutTaskWithJobs(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error)
	// ClaimPushJobs leases up to limit due jobs (due and not leased, or
	// whose lease expired) until now+lease, atomically: two concurrent
	// claims never get the same job while its lease runs.
	ClaimPushJobs(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]PushJob, error)
	// AckPushJobs deletes delivered (or relayed) jobs.
	AckPushJobs(ctx context.Context, ids ...string) error
	// RetryPushJob records a failed attempt and makes the job due again at due.
	RetryPushJob(ctx context.Context, id string, attempts int, due time.Time, lastErr string) error
	// DeadPushJob moves a job to the dead letters.
	DeadPushJob(ctx context.Context, id string, attempts int, reason string) error
	// ReleasePushLeases makes every leased job claimable again (at start:
	// the previous process is gone). It returns how many it released.
	ReleasePushLeases(ctx context.Context) (int, error)
	// PushQueueDepth counts the jobs in the outbox.
	PushQueueDepth(ctx context.Context) (int, error)
	// ListDeadPushJobs returns up to limit dead letters, oldest first.
	ListDeadPushJobs(ctx context.Context, limit int) ([]DeadPushJob, error)
	// RequeueDeadPushJobs moves the dead letter id (all of them when id is
	// "") back to the outbox with zero attempts, keeping its delivery id.
	// It returns how many it moved.
	RequeueDeadPushJobs(ctx context.Context, id string) (int, error)
}

// PushStore is the push part of a store: configs and the outbox. The agent
// finds it in Capabilities.Push when push is on; push delivery
// (package push) reads configs and drains the outbox.
type PushStore interface {
	PushConfigStore
	Outbox
}

var _ PushStore = (*SQLite)(nil)
