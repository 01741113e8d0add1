package store

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The durability levels SQLiteOptions.Durability accepts.
const (
	// DurabilityFull syncs the write-ahead log after every commit, before
	// any write of it returns: a write that returned survives power loss.
	// The sync runs off the writer goroutine, overlapping the next batch
	// (pipelined group commit, writer_sync.go).
	DurabilityFull = "full"
	// DurabilityNormal syncs only at checkpoints (PRAGMA synchronous=NORMAL):
	// a write that returned survives a process crash, but the last commits
	// may be lost on power loss or an OS crash. The database stays consistent.
	DurabilityNormal = "normal"
)

// Defaults of SQLiteOptions.
const (
	defaultBusyTimeout = 5 * time.Second
	defaultMaxBatch    = 256
)

// ParseDurability validates a durability name and returns its canonical form,
// DurabilityFull or DurabilityNormal. Case and surrounding spaces are
// ignored; "" means DurabilityFull.
func ParseDurability(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", DurabilityFull:
		return DurabilityFull, nil
	case DurabilityNormal:
		return DurabilityNormal, nil
	}
	return "", fmt.Errorf("unknown durability %q (want %q or %q)", s, DurabilityFull, DurabilityNormal)
}

// SQLiteOptions tunes OpenSQLite. The zero value is a sensible default.
type SQLiteOptions struct {
	// Durability is DurabilityFull (the default, also for "") or
	// DurabilityNormal; see ParseDurability.
	Durability string
	// BusyTimeout bounds how long a statement waits for a lock held by
	// another connection (another process, or the sqlite3 CLI). Zero means
	// 5s; negative values are rejected.
	BusyTimeout time.Duration
	// ReadConns is the size of the read connection pool. Zero means
	// max(4, GOMAXPROCS).
	ReadConns int

	// maxBatch caps how many queued writes share one transaction; zero
	// means defaultMaxBatch. 1 disables group commit (benchmark baseline).
	maxBatch int
	// serialSync makes durability full sync inside SQLite's COMMIT
	// (synchronous=FULL) instead of through the pipelined WAL syncer
	// (writer_sync.go): the baseline of tests and benchmarks.
	serialSync bool
}

// SQLite is the embedded Store: one SQLite database in WAL mode, written by a
// single goroutine that group-commits queued writes, and read through a pool
// of connections that run concurrently with it. Create it with OpenSQLite.
type SQLite struct {
	rdb *sql.DB // read pool (query_only connections)
	wdb *sql.DB // holds the single write connection

	w        *writer
	closed   atomic.Bool
	ckpt     *checkpointer // copies the WAL into the database file
	quit     chan struct{} // closed by Close: the writer stops
	stopped  chan struct{} // closed by the writer when it has returned
	closeMu  sync.Mutex
	closeRan bool
	closeErr error

	getTask    *sql.Stmt
	getContext *sql.Stmt
	countTasks *sql.Stmt
	lastEvent  *sql.Stmt // RPC-17 (sqlite_events.go)
	readEvents *sql.Stmt
	getSent    *sql.Stmt // RPC-18 (sqlite_sent.go)

	events pendingEvents // appended events waiting for their task's write
	sent   sentClaims    // claimed message ids not committed yet

	sentSeen   *sentFilter  // message ids this store recorded (sqlite_sent_filter.go)
	nSentReads atomic.Int64 // claims that read the database (tests)

	listMu    sync.Mutex
	listStmts [listVariants]*sql.Stmt
	cntStmts  [countVariants]*sql.Stmt
}

var _ Store = (*SQLite)(nil)

// Close flushes the writes already queued, stops the writer and closes the
// database. Later calls return the first call's result; every other method
// returns ErrClosed once Close has started.
func (s *SQLite) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closeRan {
		return s.closeErr
	}
	s.closeRan = true
	s.closed.Store(true)
	close(s.quit)
	<-s.stopped
	// Answer what raced into the queue after the writer's last drain.
	for {
		select {
		case r := <-s.w.reqs:
			r.done <- writeResult{err: ErrClosed}
			continue
		default:
		}
		break
	}
	if err := s.closeHandles(); err != nil {
		s.closeErr = fmt.Errorf("closing task store: %w", err)
	}
	return s.closeErr
}

// closeHandles releases statements and connections, readers first so that
// the writer's connection is the last one and checkpoints the WAL.
func (s *SQLite) closeHandles() error {
	var errs []error
	s.listMu.Lock()
	stmts := []*sql.Stmt{s.getTask, s.getContext, s.countTasks, s.lastEvent, s.readEvents, s.getSent}
	stmts = append(stmts, s.listStmts[:]...)
	stmts = append(stmts, s.cntStmts[:]...)
	s.listMu.Unlock()
	for _, st := range stmts {
		if st != nil {
			errs = append(errs, st.Close())
		}
	}
	if s.ckpt != nil {
		errs = append(errs, s.ckpt.close())
	}
	if s.rdb != nil {
		errs = append(errs, s.rdb.Close())
	}
	if s.w != nil {
		errs = append(errs, s.w.close())
	}
	if s.wdb != nil {
		errs = append(errs, s.wdb.Close())
	}
	return errors.Join(errs...)
}

// readErr maps an error of a read that raced with Close to ErrClosed.
func (s *SQLite) readErr(err error) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return err
}
