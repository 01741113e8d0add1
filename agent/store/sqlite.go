package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// The durability levels SQLiteOptions.Durability accepts.
const (
	// DurabilityFull syncs the write-ahead log on every commit
	// (PRAGMA synchronous=FULL): a write that returned survives power loss.
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

	listMu    sync.Mutex
	listStmts [listVariants]*sql.Stmt
	cntStmts  [countVariants]*sql.Stmt
}

var _ Store = (*SQLite)(nil)

// OpenSQLite opens (creating it when missing, with mode 0600, and its
// directory with mode 0700) the task database at path, brings its schema up
// to date and starts the writer. The caller must Close it.
func OpenSQLite(path string, opts SQLiteOptions) (*SQLite, error) {
	s, err := openSQLite(path, opts)
	if err != nil {
		return nil, fmt.Errorf("opening task store: %w", err)
	}
	return s, nil
}

func openSQLite(path string, opts SQLiteOptions) (_ *SQLite, err error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, errors.New("the database path must be a file name")
	}
	durability, err := ParseDurability(opts.Durability)
	if err != nil {
		return nil, err
	}
	syncMode := "FULL"
	if durability == DurabilityNormal {
		syncMode = "NORMAL"
	}
	busy := opts.BusyTimeout
	if busy < 0 {
		return nil, fmt.Errorf("negative busy timeout %v", busy)
	}
	if busy == 0 {
		busy = defaultBusyTimeout
	}
	readConns := opts.ReadConns
	if readConns < 0 {
		return nil, fmt.Errorf("negative read connection count %d", readConns)
	}
	if readConns == 0 {
		readConns = max(4, runtime.GOMAXPROCS(0))
	}
	maxBatch := opts.maxBatch
	if maxBatch <= 0 {
		maxBatch = defaultMaxBatch
	}

	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving path: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("creating directory: %w", err)
	}
	// Create the file ourselves so that it (and the -wal/-shm files SQLite
	// derives their mode from it) is private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("creating database file: %w", err)
	}

	// A file: URI with an escaped path, so that no character of the path
	// can be taken for a DSN parameter.
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
	busyMS := strconv.FormatInt(busy.Milliseconds(), 10)
	ctx := context.Background()

	s := &SQLite{
		quit:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	defer func() {
		if err != nil {
			s.closeHandles()
		}
	}()

	s.wdb, err = sql.Open("sqlite", base+"?_pragma=busy_timeout("+busyMS+")&_pragma=synchronous("+syncMode+")&_pragma=wal_autocheckpoint(0)")
	if err != nil {
		return nil, fmt.Errorf("opening write connection: %w", err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	wconn, err := s.wdb.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening write connection: %w", err)
	}
	var mode string
	if err := wconn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		_ = wconn.Close()
		return nil, fmt.Errorf("enabling WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		_ = wconn.Close()
		return nil, fmt.Errorf("enabling WAL: journal mode is %q", mode)
	}
	if err := migrate(ctx, wconn); err != nil {
		_ = wconn.Close()
		return nil, err
	}
	s.w, err = newWriter(wconn, maxBatch)
	if err != nil {
		_ = wconn.Close()
		return nil, fmt.Errorf("preparing write statements: %w", err)
	}

	s.rdb, err = sql.Open("sqlite", base+"?_pragma=busy_timeout("+busyMS+")&_query_only=1")
	if err != nil {
		return nil, fmt.Errorf("opening read connections: %w", err)
	}
	s.rdb.SetMaxOpenConns(readConns)
	s.rdb.SetMaxIdleConns(readConns)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.getTask, `SELECT body, artifacts FROM tasks WHERE id = ? AND owner = ?`},
		{&s.getContext, `SELECT cwd, state, created_at, updated_at FROM contexts WHERE owner = ? AND id = ?`},
		{&s.countTasks, `SELECT n FROM task_counts WHERE owner = ? AND context_id = ? AND state = ?`},
	} {
		if *p.dst, err = s.rdb.PrepareContext(ctx, p.q); err != nil {
			return nil, fmt.Errorf("preparing read statements: %w", err)
		}
	}

	s.ckpt, err = startCheckpointer(base + "?_pragma=busy_timeout(" + busyMS + ")&_pragma=synchronous(" + syncMode + ")")
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint connection: %w", err)
	}

	go s.w.run(s.quit, s.stopped)
	return s, nil
}

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
	stmts := []*sql.Stmt{s.getTask, s.getContext, s.countTasks}
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

// GetTask returns the owner's task, or ErrNotFound.
func (s *SQLite) GetTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	rows, err := s.getTask.QueryContext(ctx, id, owner)
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading task: %w", err))
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, s.readErr(fmt.Errorf("reading task: %w", err))
		}
		return nil, ErrNotFound
	}
	var body, arts sql.RawBytes
	if err := rows.Scan(&body, &arts); err != nil {
		return nil, s.readErr(fmt.Errorf("reading task: %w", err))
	}
	t := new(a2a.Task)
	if err := decodeTask(t, body, arts, true); err != nil {
		return nil, err
	}
	return t, nil
}

// decodeTask fills t from the stored body and, when withArtifacts, the
// stored artifacts.
func decodeTask(t *a2a.Task, body, arts []byte, withArtifacts bool) error {
	if err := json.Unmarshal(body, t); err != nil {
		return fmt.Errorf("decoding stored task: %w", err)
	}
	t.Artifacts = nil
	if withArtifacts && len(arts) > 0 {
		if err := json.Unmarshal(arts, &t.Artifacts); err != nil {
			return fmt.Errorf("decoding stored artifacts of task %q: %w", t.ID, err)
		}
	}
	return nil
}

// GetContext returns the owner's context record, or ErrNotFound.
func (s *SQLite) GetContext(ctx context.Context, owner, id string) (*ContextRecord, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	c := &ContextRecord{Owner: owner, ID: id}
	var created, updated int64
	err := s.getContext.QueryRowContext(ctx, owner, id).Scan(&c.Cwd, &c.State, &created, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading context: %w", err))
	}
	c.CreatedAt = time.UnixMilli(created).UTC()
	c.UpdatedAt = time.UnixMilli(updated).UTC()
	return c, nil
}

// List query variants: which optional clauses a query has.
const (
	lvContext   = 1 << iota // AND context_id = ?
	lvState                 // AND state = ?
	lvAfter                 // AND status_ts >= ?
	lvCursor                // AND (status_ts, id) < (?, ?)
	lvArtifacts             // also select artifacts
	listVariants
)

// countVariants are the lvContext|lvState combinations of the COUNT(*)
// fallback used when StatusAfter is set.
const countVariants = lvAfter

func listSQL(v int) string {
	var b strings.Builder
	b.WriteString("SELECT id, status_ts, body")
	if v&lvArtifacts != 0 {
		b.WriteString(", artifacts")
	}
	b.WriteString(" FROM tasks INDEXED BY ")
	b.WriteString(indexFor(v))
	b.WriteString(" WHERE owner = ?")
	writeFilters(&b, v)
	if v&lvCursor != 0 {
		b.WriteString(" AND (status_ts, id) < (?, ?)")
	}
	b.WriteString(" ORDER BY status_ts DESC, id DESC LIMIT ?")
	return b.String()
}

func countSQL(v int) string {
	var b strings.Builder
	b.WriteString("SELECT COUNT(*) FROM tasks INDEXED BY ")
	b.WriteString(indexFor(v))
	b.WriteString(" WHERE owner = ?")
	writeFilters(&b, v|lvAfter)
	return b.String()
}

// indexFor names the index whose equality prefix matches the filters of
// variant v. The planner has no statistics and, with several range
// constraints, may otherwise walk a shorter index and filter rows.
func indexFor(v int) string {
	switch v & (lvContext | lvState) {
	case lvContext:
		return "tasks_owner_ctx_ts"
	case lvState:
		return "tasks_owner_state_ts"
	case lvContext | lvState:
		return "tasks_owner_ctx_state_ts"
	}
	return "tasks_owner_ts"
}

func writeFilters(b *strings.Builder, v int) {
	if v&lvContext != 0 {
		b.WriteString(" AND context_id = ?")
	}
	if v&lvState != 0 {
		b.WriteString(" AND state = ?")
	}
	if v&lvAfter != 0 {
		b.WriteString(" AND status_ts >= ?")
	}
}

// stmt returns the prepared statement *slot holds, preparing q first.
func (s *SQLite) stmt(ctx context.Context, slot **sql.Stmt, q string) (*sql.Stmt, error) {
	s.listMu.Lock()
	defer s.listMu.Unlock()
	if *slot != nil {
		return *slot, nil
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	st, err := s.rdb.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	*slot = st
	return st, nil
}

// ceilMilli is t in Unix milliseconds, rounded up so that a millisecond
// timestamp is at or after t exactly when it is >= the result.
func ceilMilli(t time.Time) int64 {
	ms := t.UnixMilli()
	if time.UnixMilli(ms).Before(t) {
		ms++
	}
	return ms
}

// ListTasks returns one page of the owner's tasks, status time descending
// then id descending, using keyset pagination. Total comes from the
// trigger-maintained task_counts table unless StatusAfter is set, in which
// case the matching rows are counted through an index.
func (s *SQLite) ListTasks(ctx context.Context, q ListQuery) (ListResult, error) {
	if s.closed.Load() {
		return ListResult{}, ErrClosed
	}
	if q.Limit < 1 {
		return ListResult{}, fmt.Errorf("listing tasks: limit %d is not positive", q.Limit)
	}
	v := 0
	args := make([]any, 1, 8)
	args[0] = q.Owner
	if q.ContextID != "" {
		v |= lvContext
		args = append(args, q.ContextID)
	}
	if q.State != "" {
		v |= lvState
		args = append(args, string(q.State))
	}
	if !q.StatusAfter.IsZero() {
		v |= lvAfter
		args = append(args, ceilMilli(q.StatusAfter))
	}
	nfilter := len(args)
	if q.After != nil {
		v |= lvCursor
		args = append(args, q.After.StatusTime.UnixMilli(), q.After.TaskID)
	}
	if q.IncludeArtifacts {
		v |= lvArtifacts
	}
	args = append(args, q.Limit+1)

	list, err := s.stmt(ctx, &s.listStmts[v], listSQL(v))
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	var count *sql.Stmt
	var countArgs []any
	if v&lvAfter != 0 {
		cv := v & (lvContext | lvState)
		if count, err = s.stmt(ctx, &s.cntStmts[cv], countSQL(cv)); err != nil {
			return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
		}
		countArgs = args[:nfilter]
	} else {
		count = s.countTasks
		countArgs = []any{q.Owner, q.ContextID, string(q.State)}
	}

	// One read transaction, so that Total and the page see the same snapshot.
	tx, err := s.rdb.BeginTx(ctx, nil)
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	defer func() { _ = tx.Rollback() }()

	var res ListResult
	var total int64
	err = tx.StmtContext(ctx, count).QueryRowContext(ctx, countArgs...).Scan(&total)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return ListResult{}, s.readErr(fmt.Errorf("counting tasks: %w", err))
	}
	res.Total = int(total)

	rows, err := tx.StmtContext(ctx, list).QueryContext(ctx, args...)
	if err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	defer rows.Close()
	res.Tasks = make([]a2a.Task, 0, min(q.Limit, 128))
	var (
		id         string
		ts         int64
		body, arts sql.RawBytes
	)
	dst := []any{&id, &ts, &body}
	if q.IncludeArtifacts {
		dst = append(dst, &arts)
	}
	var lastTS int64
	var lastID string
	for rows.Next() {
		if len(res.Tasks) == q.Limit {
			res.Next = &Cursor{StatusTime: time.UnixMilli(lastTS).UTC(), TaskID: lastID}
			break
		}
		if err := rows.Scan(dst...); err != nil {
			return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
		}
		res.Tasks = append(res.Tasks, a2a.Task{})
		if err := decodeTask(&res.Tasks[len(res.Tasks)-1], body, arts, q.IncludeArtifacts); err != nil {
			return ListResult{}, err
		}
		lastTS, lastID = ts, id
	}
	if err := rows.Err(); err != nil {
		return ListResult{}, s.readErr(fmt.Errorf("listing tasks: %w", err))
	}
	return res, nil
}
