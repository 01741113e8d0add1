package push

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Job is one delivery taken from a queue. Token and Credentials are sealed
// with the key ring (additional data: SecretAAD).
type Job struct {
	// ID is the stable delivery id, sent as X-A2A-Delivery-Id.
	ID string `json:"id"`
	// TaskID, ConfigID and Owner say which config the job was made for.
	TaskID   string `json:"taskId"`
	ConfigID string `json:"configId"`
	Owner    string `json:"owner"`
	// URL is the callback.
	URL string `json:"url"`
	// Token and Credentials are sealed; Scheme is plain.
	Token       string `json:"token,omitempty"`
	Scheme      string `json:"scheme,omitempty"`
	Credentials string `json:"credentials,omitempty"`
	// Payload is the StreamResponse JSON.
	Payload []byte `json:"payload"`
	// Attempts counts attempts already made.
	Attempts int `json:"attempts"`
	// CreatedMS is when the triggering state change was stored (Unix ms).
	CreatedMS int64 `json:"created"`
	// Origin identifies the queue (process) that relayed the job to a
	// shared stream; only that process can see the job's config in its
	// store, so only it drops jobs whose config was deleted.
	Origin string `json:"origin,omitempty"`
	// TraceParent is the W3C traceparent of the turn that produced the
	// job; each attempt's span links to it. Empty for jobs stored before
	// it existed, or without tracing.
	TraceParent string `json:"traceparent,omitempty"`

	handle string // queue-specific: stream entry id
}

// DeadJob is a dead letter.
type DeadJob struct {
	Job
	// Reason says why the delivery died.
	Reason string `json:"reason"`
	// DeadAt is when.
	DeadAt time.Time `json:"deadAt"`
}

// SecretAAD is the additional authenticated data a config's secret is
// sealed with: it binds the value to its task, config and field.
func SecretAAD(taskID, configID, field string) string {
	return taskID + "\x00" + configID + "\x00" + field
}

// Queue is where delivery jobs wait (PUSH-5, PUSH-6). Implementations are
// safe for concurrent use.
type Queue interface {
	// Prepare runs once before any Claim (recover leases, create groups).
	Prepare(ctx context.Context) error
	// Run does the queue's background work (relaying, promoting due
	// retries, reclaiming expired leases) until ctx ends.
	Run(ctx context.Context)
	// Claim waits up to about a second for due jobs and leases up to n.
	// It returns no jobs and no error when none came.
	Claim(ctx context.Context, n int) ([]Job, error)
	// Ack removes a delivered job.
	Ack(ctx context.Context, j Job) error
	// Retry makes j (whose Attempts is already incremented) due again at due.
	Retry(ctx context.Context, j Job, due time.Time, reason string) error
	// Dead moves j to the dead letters.
	Dead(ctx context.Context, j Job, reason string) error
	// Depth counts jobs waiting or being delivered (retries included).
	Depth(ctx context.Context) (int64, error)
	// ListDead returns up to limit dead letters, oldest first.
	ListDead(ctx context.Context, limit int) ([]DeadJob, error)
	// Requeue moves the dead letter with delivery id id (every one when id
	// is "") back to the queue with zero attempts; it returns how many.
	Requeue(ctx context.Context, id string) (int, error)
	// Wake tells the queue that jobs were added to the outbox.
	Wake()
	// Close releases connections.
	Close() error
}

// configChecker is implemented by queues that can read the push configs.
// Before each attempt the engine asks whether the config a job was made for
// still exists, and drops the job when not (PUSH-1: deleting a config drops
// its pending deliveries, including those already relayed to Redis or
// claimed before the delete).
type configChecker interface {
	configLive(ctx context.Context, j Job) (bool, error)
}

// configLive reads the job's config (one primary-key lookup). The job is
// stale when the config is gone, or when a config with the same id was
// created after the job (the one it was made for was deleted; a config
// without id gets the task id, so ids are reused). On a read error it says
// live: the attempt goes ahead (at least once).
func configLive(ctx context.Context, st store.PushStore, j Job) (bool, error) {
	c, err := st.GetPushConfig(ctx, j.Owner, j.TaskID, j.ConfigID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if j.CreatedMS > 0 && c.CreatedAt.UnixMilli() > j.CreatedMS {
		return false, nil
	}
	return true, nil
}

// Stats are the delivery counters (PUSH-7), shared by every worker of an
// engine.
type Stats struct {
	// Queued counts jobs created by state changes.
	Queued atomic.Int64
	// Delivered counts 2xx answers.
	Delivered atomic.Int64
	// Retried counts attempts that were scheduled again.
	Retried atomic.Int64
	// DeadLettered counts jobs moved to the dead letters.
	DeadLettered atomic.Int64
	// Attempts counts every POST made.
	Attempts atomic.Int64
}

// Snapshot is a copy of the counters plus the queue depth.
type Snapshot struct {
	Queued, Delivered, Retried, DeadLettered, Attempts, Depth int64
}

// LocalQueue is the `local-file` queue: the transactional outbox table of
// the SQLite store (PUSH-5). Jobs are inserted by the store in the same
// transaction as the state change; Claim leases due jobs in one
// UPDATE … RETURNING; an expired lease makes a job claimable again, and
// Prepare releases every lease left by a previous process.
type LocalQueue struct {
	st    store.PushStore
	lease time.Duration
	wake  chan struct{}
	poll  time.Duration
}

// NewLocalQueue returns the outbox queue of st. lease bounds how long a
// claimed job stays invisible to other claims (default 60s).
func NewLocalQueue(st store.PushStore, lease time.Duration) *LocalQueue {
	if lease <= 0 {
		lease = time.Minute
	}
	return &LocalQueue{st: st, lease: lease, wake: make(chan struct{}, 1), poll: 250 * time.Millisecond}
}

// Prepare releases the leases of a previous process (single node).
func (q *LocalQueue) Prepare(ctx context.Context) error {
	_, err := q.st.ReleasePushLeases(ctx)
	return err
}

// Run does nothing: expired leases are taken by Claim itself.
func (q *LocalQueue) Run(ctx context.Context) { <-ctx.Done() }

// Wake wakes a waiting Claim.
func (q *LocalQueue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Claim leases up to n due jobs, waiting up to a second for some.
func (q *LocalQueue) Claim(ctx context.Context, n int) ([]Job, error) {
	deadline := time.Now().Add(time.Second)
	for {
		js, err := q.st.ClaimPushJobs(ctx, time.Now(), q.lease, n)
		if err != nil {
			return nil, err
		}
		if len(js) > 0 {
			out := make([]Job, len(js))
			for i, j := range js {
				out[i] = fromStoreJob(j)
			}
			return out, nil
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return nil, nil
		}
		t := time.NewTimer(min(wait, q.poll))
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil
		case <-q.wake:
			t.Stop()
		case <-t.C:
		}
	}
}

func fromStoreJob(j store.PushJob) Job {
	return Job{ID: j.ID, TaskID: j.TaskID, ConfigID: j.ConfigID, Owner: j.Owner, URL: j.URL, Token: j.Token,
		Scheme: j.Scheme, Credentials: j.Credentials, Payload: j.Payload, Attempts: j.Attempts, CreatedMS: j.CreatedAt.UnixMilli(),
		TraceParent: j.TraceParent}
}

// Ack deletes the job.
func (q *LocalQueue) Ack(ctx context.Context, j Job) error { return q.st.AckPushJobs(ctx, j.ID) }

// Retry reschedules the job.
func (q *LocalQueue) Retry(ctx context.Context, j Job, due time.Time, reason string) error {
	return q.st.RetryPushJob(ctx, j.ID, j.Attempts, due, reason)
}

// Dead moves the job to the push_dead table.
func (q *LocalQueue) Dead(ctx context.Context, j Job, reason string) error {
	return q.st.DeadPushJob(ctx, j.ID, j.Attempts, reason)
}

// Depth counts outbox rows.
func (q *LocalQueue) Depth(ctx context.Context) (int64, error) {
	n, err := q.st.PushQueueDepth(ctx)
	return int64(n), err
}

// ListDead lists the push_dead table.
func (q *LocalQueue) ListDead(ctx context.Context, limit int) ([]DeadJob, error) {
	ds, err := q.st.ListDeadPushJobs(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DeadJob, len(ds))
	for i, d := range ds {
		out[i] = DeadJob{Job: fromStoreJob(d.PushJob), Reason: d.Reason, DeadAt: d.DeadAt}
	}
	return out, nil
}

// Requeue moves dead letters back to the outbox.
func (q *LocalQueue) Requeue(ctx context.Context, id string) (int, error) {
	n, err := q.st.RequeueDeadPushJobs(ctx, id)
	if n > 0 {
		q.Wake()
	}
	return n, err
}

// Close does nothing: the store belongs to its opener.
func (q *LocalQueue) Close() error { return nil }

// configLive: a job claimed before its config was deleted is not sent.
func (q *LocalQueue) configLive(ctx context.Context, j Job) (bool, error) {
	return configLive(ctx, q.st, j)
}

var (
	_ Queue         = (*LocalQueue)(nil)
	_ configChecker = (*LocalQueue)(nil)
)
