package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
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
	// traceparent: the W3C traceparent of the turn writing the task (from
	// ctx), stored with each job; "" when not traced.
	traceparent string

	// opPutTask: the task's events appended since its last write (RPC-17),
	// inserted in the same transaction; keep bounds the task's log.
	events []encodedEvent
	keep   int

	// noWait: queued by PutTaskNoWait; nobody waits for the result, so
	// a later write of the task in the same batch may supersede it.
	noWait bool

	// opFunc: noTasks says fn neither reads nor writes the tasks table,
	// so coalescing may look past it.
	noTasks bool

	// opFunc
	fn func(w *writer, nowMS int64) (int, error)

	// after, when set, is called once the request's transaction committed
	// (nil) or failed, after the request was answered.
	after func(error)

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

// writeQueue is how many writes may wait for the writer goroutine.
const writeQueue = 4096

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

	cached map[string]*sql.Stmt // statements prepared on first use (sqlite_push.go)

	pending map[string]int // coalesce's scratch map, task id -> batch index

	// sync, when set (durability full), syncs the WAL after each commit
	// off this goroutine and answers the batch then (writer_sync.go);
	// nil: SQLite syncs in COMMIT (or not at all) and the writer answers.
	sync *walSync

	// Counters for tests and benchmarks.
	nBatches   atomic.Int64 // transactions committed or attempted for a batch
	nRequests  atomic.Int64 // requests in those batches
	nRetries   atomic.Int64 // batches that failed and were retried one by one
	nCoalesced atomic.Int64 // queued task writes superseded within their batch
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
	if w.sync != nil {
		defer w.sync.stop() // every committed batch synced and answered first
	}
	batch := make([]*writeReq, 0, w.maxBatch)
	for {
		select {
		case r := <-w.reqs:
			// No yield before filling the batch: under load the writes
			// queued during the previous commit make the batch, and a
			// yield put the writer — the one goroutine every durable
			// request waits on — behind every runnable goroutine (issue
			// 17: about 2x the ns/op of BenchmarkPutTaskGroupCommit).
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

// process runs a batch in one transaction and answers every request (with
// a WAL syncer: hands the committed batch to it, which answers after the
// fsync). If the transaction fails, each request is retried in a
// transaction of its own, so one bad write does not fail the others.
func (w *writer) process(batch []*writeReq) {
	live := batch[:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			answer(r, writeResult{err: err})
			continue
		}
		live = append(live, r)
	}
	live = w.coalesce(live)
	if len(live) == 0 {
		return
	}
	if w.sync != nil {
		if err := w.sync.err(); err != nil {
			// The WAL could not be synced: nothing more is committed.
			for _, r := range live {
				answer(r, writeResult{err: err})
			}
			return
		}
	}
	live, err := w.runTx(live, w.results, w.sync != nil)
	out := w.results[:len(live)]
	w.nBatches.Add(1)
	w.nRequests.Add(int64(len(live)))
	if err != nil {
		if len(live) == 1 {
			out[0] = writeResult{err: err}
		} else {
			w.nRetries.Add(1)
			for i := range live {
				if _, err := w.runTx(live[i:i+1], out[i:i+1], false); err != nil {
					out[i] = writeResult{err: err}
				}
			}
		}
	}
	if w.sync != nil {
		w.sync.hand(live, out) // answered once the WAL is synced
	} else {
		for i, r := range live {
			answer(r, out[i])
		}
	}
	clear(out)
}

// runTx applies reqs in one transaction, storing each result in out (at
// least as long as reqs), and commits. With absorb, requests that arrive
// while the previous batch's WAL sync runs join the transaction before
// its commit (see absorb); runTx returns the requests it holds, reqs
// extended. On error the transaction is rolled back and out is
// meaningless.
func (w *writer) runTx(reqs []*writeReq, out []writeResult, absorb bool) ([]*writeReq, error) {
	if _, err := w.begin.Exec(); err != nil {
		w.rollbackQuiet()
		return reqs, fmt.Errorf("starting write transaction: %w", err)
	}
	now := time.Now().UnixMilli()
	for i, r := range reqs {
		n, err := w.apply(r, now)
		if err != nil && !errors.Is(err, ErrNotFound) {
			w.rollbackQuiet()
			return reqs, err
		}
		out[i] = writeResult{n: n, err: err}
	}
	if absorb {
		var err error
		if reqs, err = w.absorb(reqs, out, now); err != nil {
			w.rollbackQuiet()
			return reqs, err
		}
	}
	if _, err := w.commit.Exec(); err != nil {
		w.rollbackQuiet()
		return reqs, fmt.Errorf("committing write transaction: %w", err)
	}
	return reqs, nil
}

// absorb applies, inside the open transaction, the requests that arrive
// while earlier batches wait for their WAL sync (up to maxBatch). The
// commit then follows that sync instead of making a batch of its own: one
// commit per sync, as with the sync inside COMMIT, and this batch's
// statements overlap the sync (issue 29).
func (w *writer) absorb(reqs []*writeReq, out []writeResult, now int64) ([]*writeReq, error) {
	for w.sync.pending.Load() > 0 && len(reqs) < w.maxBatch {
		select {
		case r := <-w.reqs:
			if err := r.ctx.Err(); err != nil {
				answer(r, writeResult{err: err})
				continue
			}
			n, err := w.apply(r, now)
			reqs = append(reqs, r)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return reqs, err
			}
			out[len(reqs)-1] = writeResult{n: n, err: err}
		case <-w.sync.synced:
		}
	}
	return reqs, nil
}

// rollbackQuiet ends the current transaction, if any (SQLite may already
// have rolled it back after some errors).
func (w *writer) rollbackQuiet() {
	_, _ = w.rollback.Exec()
}
