package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// opKind is the kind of a queued write.
type opKind uint8

const (
	opPutTask opKind = iota
	opPutContext
	opFailInterrupted
	opFunc // run fn inside the write transaction (push outbox operations)
)

// writeReq is one write waiting for the writer goroutine. Callers encode
// everything they can before queueing it, so the writer only runs SQL.
type writeReq struct {
	ctx  context.Context
	kind opKind

	// opPutTask
	id, owner, contextID, state string
	statusTS                    int64
	body                        string
	artifacts                   any // nil (no artifacts) or a JSON string

	// opPutContext
	rec ContextRecord

	// opFailInterrupted
	msg string
	now time.Time

	// opPutTask with push jobs: the StreamResponse JSON of the state change;
	// one job per push config of the task is inserted in the same
	// transaction (PUSH-5). nil: no jobs.
	payload []byte

	// opFunc
	fn func(w *writer, nowMS int64) (int, error)

	done chan writeResult // buffered (1): the writer never blocks on it
}

// writeResult is the outcome of one writeReq.
type writeResult struct {
	n   int
	err error
}

var reqPool = sync.Pool{New: func() any { return &writeReq{done: make(chan writeResult, 1)} }}

func getReq(ctx context.Context, kind opKind) *writeReq {
	r := reqPool.Get().(*writeReq)
	r.ctx, r.kind = ctx, kind
	return r
}

// putReq recycles r; only when its result has been received.
func putReq(r *writeReq) {
	done := r.done
	*r = writeReq{done: done}
	reqPool.Put(r)
}

// writer owns the write connection. Its goroutine takes every queued request
// (up to maxBatch) into one transaction and commits it once, so concurrent
// writers share the cost of the sync.
type writer struct {
	conn     *sql.Conn
	maxBatch int
	reqs     chan *writeReq // buffered; FIFO, so one caller's writes apply in order

	begin, commit, rollback   *sql.Stmt
	putTask, putContext       *sql.Stmt
	selInterrupted, updFailed *sql.Stmt

	results []writeResult

	cached map[string]*sql.Stmt // statements prepared on first use (push.go)

	// Counters for tests and benchmarks.
	nBatches  atomic.Int64 // transactions committed or attempted for a batch
	nRequests atomic.Int64 // requests in those batches
	nRetries  atomic.Int64 // batches that failed and were retried one by one
}

// selInterruptedSQL finds the tasks in one of two states. The counts table
// says which owners have tasks in a state, so it reads only the affected
// tasks, through tasks_owner_state_ts, instead of scanning every task.
const selInterruptedSQL = `SELECT t.id, t.context_id, t.body
FROM task_counts AS c CROSS JOIN tasks AS t ON t.owner = c.owner AND t.state = c.state
WHERE c.context_id = '' AND c.state IN (?, ?) AND c.n > 0`

func newWriter(conn *sql.Conn, maxBatch int) (*writer, error) {
	w := &writer{
		conn:     conn,
		maxBatch: maxBatch,
		reqs:     make(chan *writeReq, writeQueue),
		results:  make([]writeResult, maxBatch),
	}
	ctx := context.Background()
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&w.begin, `BEGIN IMMEDIATE`},
		{&w.commit, `COMMIT`},
		{&w.rollback, `ROLLBACK`},
		{&w.putTask, `INSERT INTO tasks (id, owner, context_id, state, status_ts, body, artifacts, created_ms, updated_ms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET
	context_id = excluded.context_id,
	state = excluded.state,
	status_ts = excluded.status_ts,
	body = excluded.body,
	artifacts = excluded.artifacts,
	updated_ms = excluded.updated_ms
WHERE tasks.owner = excluded.owner`},
		{&w.putContext, `INSERT INTO contexts (owner, id, cwd, state, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (owner, id) DO UPDATE SET
	cwd = excluded.cwd,
	state = excluded.state,
	created_at = excluded.created_at,
	updated_at = excluded.updated_at`},
		{&w.selInterrupted, selInterruptedSQL},
		{&w.updFailed, `UPDATE tasks SET state = ?, status_ts = ?, body = ?, updated_ms = ? WHERE id = ?`},
	} {
		st, err := conn.PrepareContext(ctx, p.q)
		if err != nil {
			_ = w.closeStmts()
			return nil, err
		}
		*p.dst = st
	}
	return w, nil
}

func (w *writer) closeStmts() error {
	var errs []error
	for _, st := range w.cached {
		errs = append(errs, st.Close())
	}
	w.cached = nil
	for _, st := range []*sql.Stmt{w.begin, w.commit, w.rollback, w.putTask, w.putContext, w.selInterrupted, w.updFailed} {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	return errors.Join(errs...)
}

// close releases the statements and the connection; the goroutine must
// have stopped.
func (w *writer) close() error {
	return errors.Join(w.closeStmts(), w.conn.Close())
}

// run is the writer goroutine. It stops when quit is closed, after serving
// every request it can still take without waiting.
func (w *writer) run(quit <-chan struct{}, stopped chan<- struct{}) {
	defer close(stopped)
	batch := make([]*writeReq, 0, w.maxBatch)
	for {
		select {
		case r := <-w.reqs:
			if w.maxBatch > 1 {
				// Let the writers woken by the previous commit queue up.
				runtime.Gosched()
			}
			w.process(w.fill(append(batch[:0], r)))
		case <-quit:
			for {
				b := w.fill(batch[:0])
				if len(b) == 0 {
					return
				}
				w.process(b)
			}
		}
	}
}

// fill appends the requests that are queued right now, up to maxBatch.
func (w *writer) fill(b []*writeReq) []*writeReq {
	for len(b) < w.maxBatch {
		select {
		case r := <-w.reqs:
			b = append(b, r)
		default:
			return b
		}
	}
	return b
}

// process runs a batch in one transaction and answers every request. If the
// transaction fails, each request is retried in a transaction of its own, so
// one bad write does not fail the others.
func (w *writer) process(batch []*writeReq) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.done <- writeResult{err: err}
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	out := w.results[:len(live)]
	w.nBatches.Add(1)
	w.nRequests.Add(int64(len(live)))
	if err := w.runTx(live, out); err != nil {
		if len(live) == 1 {
			out[0] = writeResult{err: err}
		} else {
			w.nRetries.Add(1)
			for i := range live {
				if err := w.runTx(live[i:i+1], out[i:i+1]); err != nil {
					out[i] = writeResult{err: err}
				}
			}
		}
	}
	for i, r := range live {
		r.done <- out[i]
		out[i] = writeResult{}
	}
}

// runTx applies reqs in one transaction, storing each result in out, and
// commits. On error the transaction is rolled back and out is meaningless.
func (w *writer) runTx(reqs []*writeReq, out []writeResult) error {
	if _, err := w.begin.Exec(); err != nil {
		w.rollbackQuiet()
		return fmt.Errorf("starting write transaction: %w", err)
	}
	now := time.Now().UnixMilli()
	for i, r := range reqs {
		n, err := w.apply(r, now)
		if err != nil && !errors.Is(err, ErrNotFound) {
			w.rollbackQuiet()
			return err
		}
		out[i] = writeResult{n: n, err: err}
	}
	if _, err := w.commit.Exec(); err != nil {
		w.rollbackQuiet()
		return fmt.Errorf("committing write transaction: %w", err)
	}
	return nil
}

// rollbackQuiet ends the current transaction, if any (SQLite may already
// have rolled it back after some errors).
func (w *writer) rollbackQuiet() {
	_, _ = w.rollback.Exec()
}

// apply runs one request inside the open transaction. ErrNotFound is a
// result, not a failure: it changed nothing.
func (w *writer) apply(r *writeReq, nowMS int64) (int, error) {
	switch r.kind {
	case opPutTask:
		res, err := w.putTask.Exec(r.id, r.owner, r.contextID, r.state, r.statusTS, r.body, r.artifacts, nowMS, nowMS)
		if err != nil {
			return 0, fmt.Errorf("writing task: %w", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return 0, fmt.Errorf("writing task: %w", err)
		}
		if n == 0 {
			return 0, ErrNotFound // the id belongs to another owner
		}
		if r.payload != nil {
			jobs, err := w.insertJobs(r.id, r.owner, r.payload, nowMS)
			if err != nil {
				return 0, err
			}
			return 1 + jobs, nil // PutTaskWithJobs reports n-1 jobs
		}
		return 1, nil
	case opPutContext:
		var state any
		if r.rec.State != nil {
			state = r.rec.State
		}
		_, err := w.putContext.Exec(r.rec.Owner, r.rec.ID, r.rec.Cwd, state,
			r.rec.CreatedAt.UnixMilli(), r.rec.UpdatedAt.UnixMilli())
		if err != nil {
			return 0, fmt.Errorf("writing context: %w", err)
		}
		return 1, nil
	case opFailInterrupted:
		return w.failInterrupted(r.msg, r.now, nowMS)
	case opFunc:
		return r.fn(w, nowMS)
	}
	return 0, fmt.Errorf("unknown write kind %d", r.kind)
}

// failInterrupted rewrites the status of every SUBMITTED or WORKING task.
func (w *writer) failInterrupted(msg string, now time.Time, nowMS int64) (int, error) {
	type row struct {
		id, contextID string
		body          []byte
	}
	rows, err := w.selInterrupted.Query(string(a2a.TaskStateSubmitted), string(a2a.TaskStateWorking))
	if err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	var found []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.contextID, &r.body); err != nil {
			_ = rows.Close()
			return 0, fmt.Errorf("finding interrupted tasks: %w", err)
		}
		found = append(found, r)
	}
	if err := rows.Close(); err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("finding interrupted tasks: %w", err)
	}
	ts := a2a.Timestamp(now)
	statusMS := now.UnixMilli()
	for _, r := range found {
		// Replace only the status member, so the rest of the stored body
		// (history, metadata) is kept byte for byte.
		var m map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &m); err != nil {
			return 0, fmt.Errorf("decoding stored task %q: %w", r.id, err)
		}
		st, err := json.Marshal(a2a.TaskStatus{
			State: a2a.TaskStateFailed,
			Message: &a2a.Message{
				MessageID: newMessageID(),
				ContextID: r.contextID,
				TaskID:    r.id,
				Role:      a2a.RoleAgent,
				Parts:     []a2a.Part{a2a.TextPart(msg)},
			},
			Timestamp: ts,
		})
		if err != nil {
			return 0, fmt.Errorf("encoding status of task %q: %w", r.id, err)
		}
		m["status"] = st
		body, err := json.Marshal(m)
		if err != nil {
			return 0, fmt.Errorf("encoding task %q: %w", r.id, err)
		}
		if _, err := w.updFailed.Exec(string(a2a.TaskStateFailed), statusMS, string(body), nowMS, r.id); err != nil {
			return 0, fmt.Errorf("failing task %q: %w", r.id, err)
		}
		if err := w.notifyFailed(r.id, r.contextID, st, nowMS); err != nil {
			return 0, err
		}
	}
	return len(found), nil
}

// newMessageID returns a random (version 4) UUID.
func newMessageID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand aborts the program instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

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

// writeQueue is how many writes may wait for the writer goroutine.
const writeQueue = 4096

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
	body, err := json.Marshal(&noArts)
	if err != nil {
		return nil, fmt.Errorf("encoding task %q: %w", t.ID, err)
	}
	var arts any
	if len(t.Artifacts) > 0 {
		a, err := json.Marshal(t.Artifacts)
		if err != nil {
			return nil, fmt.Errorf("encoding artifacts of task %q: %w", t.ID, err)
		}
		arts = string(a)
	}
	r := getReq(ctx, opPutTask)
	r.id, r.owner, r.contextID, r.state = t.ID, owner, t.ContextID, string(t.Status.State)
	r.statusTS, r.body, r.artifacts = statusMS, string(body), arts
	r.payload = payload
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
