package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// submit queues r for the writer and waits for its result. If ctx ends
// first, submit returns ctx's error; the write may still be committed.
func (s *SQLite) submit(ctx context.Context, r *writeReq) (int, error) {
	if s.closed.Load() {
		putReq(r)
		return 0, ErrClosed
	}
	select {
	case s.w.reqs <- r:
	case <-s.quit:
		putReq(r)
		return 0, ErrClosed
	case <-ctx.Done():
		putReq(r)
		return 0, ctx.Err()
	}
	select {
	case res := <-r.done:
		putReq(r)
		return res.n, res.err
	case <-s.stopped:
		// Close raced this request into the queue after the writer's last
		// drain: it was answered by Close, or never will be.
		select {
		case res := <-r.done:
			return res.n, res.err
		default:
			return 0, ErrClosed
		}
	case <-ctx.Done():
		// The writer still owns r and will answer into its buffer; r is
		// not recycled.
		return 0, ctx.Err()
	}
}

// enqueue hands r to the writer without waiting for its result; r is not
// recycled. Writes a caller enqueues (or submits) apply in that order.
func (s *SQLite) enqueue(r *writeReq) error {
	if s.closed.Load() {
		return ErrClosed
	}
	select {
	case s.w.reqs <- r:
		return nil
	case <-s.quit:
		return ErrClosed
	}
}

// PutTaskNoWait queues the same write as PutTask and returns without
// waiting for it to commit: the write is not durable when it returns, and
// its failure is not reported. Later writes of the same caller apply after
// it. For intermediate states a later write supersedes.
func (s *SQLite) PutTaskNoWait(owner string, t *a2a.Task) error {
	r, err := s.taskReq(context.Background(), owner, t, nil)
	if err != nil {
		return err
	}
	r.noWait = true
	return s.enqueue(r)
}

// PutContextNoWait queues the same write as PutContext without waiting for
// it to commit (see PutTaskNoWait).
func (s *SQLite) PutContextNoWait(c ContextRecord) error {
	if c.State != nil {
		c.State = append(make([]byte, 0, len(c.State)), c.State...)
	}
	r := getReq(context.Background(), opPutContext)
	r.rec = c
	return s.enqueue(r)
}

// PutTask inserts or replaces the owner's task. It returns ErrNotFound when
// the id belongs to another owner, whose task is left untouched. The write
// is durable (per SQLiteOptions.Durability) when PutTask returns nil.
func (s *SQLite) PutTask(ctx context.Context, owner string, t *a2a.Task) error {
	_, err := s.putTask(ctx, owner, t, nil)
	return err
}

// putTask is PutTask; a non-nil payload also queues one push job per
// config of the task in the same transaction (the count is n-1).
func (s *SQLite) putTask(ctx context.Context, owner string, t *a2a.Task, payload []byte) (int, error) {
	r, err := s.taskReq(ctx, owner, t, payload)
	if err != nil {
		return 0, err
	}
	return s.submit(ctx, r)
}

// taskReq encodes a task write.
func (s *SQLite) taskReq(ctx context.Context, owner string, t *a2a.Task, payload []byte) (*writeReq, error) {
	if t == nil {
		return nil, errors.New("writing task: nil task")
	}
	if t.ID == "" {
		return nil, errors.New("writing task: empty task id")
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	var statusMS int64
	if t.Status.Timestamp == "" {
		statusMS = time.Now().UnixMilli()
	} else {
		ts, err := a2a.ParseTimestamp(t.Status.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("writing task %q: invalid status timestamp: %w", t.ID, err)
		}
		statusMS = ts.UnixMilli()
	}
	noArts := *t
	noArts.Artifacts = nil
	body, err := a2a.MarshalJSONString(&noArts)
	if err != nil {
		return nil, fmt.Errorf("encoding task %q: %w", t.ID, err)
	}
	var arts any
	if len(t.Artifacts) > 0 {
		a, err := a2a.MarshalJSONString(t.Artifacts)
		if err != nil {
			return nil, fmt.Errorf("encoding artifacts of task %q: %w", t.ID, err)
		}
		arts = a
	}
	r := getReq(ctx, opPutTask)
	r.id, r.owner, r.contextID, r.state = t.ID, owner, t.ContextID, string(t.Status.State)
	r.statusTS, r.body, r.artifacts = statusMS, body, arts
	r.payload = payload
	if payload != nil {
		r.traceparent = traceParent(ctx)
	}
	if err := s.events.drain(r, t.ID); err != nil {
		putReq(r)
		return nil, err
	}
	return r, nil
}

// PutContext inserts or replaces the context record (c.Owner, c.ID).
// Times are stored with millisecond precision.
func (s *SQLite) PutContext(ctx context.Context, c ContextRecord) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if c.State != nil {
		// The writer may still read it after an early (canceled) return.
		c.State = append(make([]byte, 0, len(c.State)), c.State...)
	}
	r := getReq(ctx, opPutContext)
	r.rec = c
	_, err := s.submit(ctx, r)
	return err
}

// FailInterrupted marks every SUBMITTED or WORKING task as FAILED, with an
// agent status message holding msg and the status time now, in one
// transaction, and returns how many tasks it changed.
func (s *SQLite) FailInterrupted(ctx context.Context, msg string, now time.Time) (int, error) {
	r := getReq(ctx, opFailInterrupted)
	r.msg, r.now = msg, now
	return s.submit(ctx, r)
}
