package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

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
	cfg, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	abs, err := createDBFile(path)
	if err != nil {
		return nil, err
	}

	// A file: URI with an escaped path, so that no character of the path
	// can be taken for a DSN parameter.
	base := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}).String()
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

	if err = s.openWriter(ctx, base, cfg); err != nil {
		return nil, err
	}
	if err = s.openReaders(ctx, base, cfg); err != nil {
		return nil, err
	}
	if err = s.openSentFilter(ctx); err != nil {
		return nil, err
	}
	s.ckpt, err = startCheckpointer(base + "?_pragma=busy_timeout(" + cfg.busyMS + ")&_pragma=synchronous(" + cfg.syncMode + ")")
	if err != nil {
		return nil, fmt.Errorf("opening checkpoint connection: %w", err)
	}

	if cfg.pipelined {
		s.w.sync = newWALSync(abs)
	}
	go s.w.run(s.quit, s.stopped)
	return s, nil
}

// sqliteConfig is SQLiteOptions validated, with the defaults applied.
type sqliteConfig struct {
	syncMode string // the PRAGMA synchronous value, FULL or NORMAL
	// pipelined: durability full through the writer's WAL syncer
	// (writer_sync.go): the write connection runs synchronous=NORMAL and
	// a batch is answered after an fsync of the WAL done off the writer.
	pipelined bool
	busyMS    string // the busy timeout in milliseconds
	readConns int
	maxBatch  int
}

// resolve validates opts and applies the defaults.
func (opts SQLiteOptions) resolve() (sqliteConfig, error) {
	durability, err := ParseDurability(opts.Durability)
	if err != nil {
		return sqliteConfig{}, err
	}
	syncMode := "FULL"
	if durability == DurabilityNormal {
		syncMode = "NORMAL"
	}
	pipelined := durability == DurabilityFull && !opts.serialSync
	busy := opts.BusyTimeout
	if busy < 0 {
		return sqliteConfig{}, fmt.Errorf("negative busy timeout %v", busy)
	}
	if busy == 0 {
		busy = defaultBusyTimeout
	}
	readConns := opts.ReadConns
	if readConns < 0 {
		return sqliteConfig{}, fmt.Errorf("negative read connection count %d", readConns)
	}
	if readConns == 0 {
		readConns = max(4, runtime.GOMAXPROCS(0))
	}
	maxBatch := opts.maxBatch
	if maxBatch <= 0 {
		maxBatch = defaultMaxBatch
	}
	return sqliteConfig{
		syncMode:  syncMode,
		pipelined: pipelined,
		busyMS:    strconv.FormatInt(busy.Milliseconds(), 10),
		readConns: readConns,
		maxBatch:  maxBatch,
	}, nil
}

// createDBFile creates the database file at path when missing (mode 0600),
// and its directory (mode 0700), and returns its absolute path.
func createDBFile(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolving path: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return "", fmt.Errorf("creating directory: %w", err)
	}
	// Create the file ourselves so that it (and the -wal/-shm files SQLite
	// derives their mode from it) is private to the user.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("creating database file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("creating database file: %w", err)
	}
	return abs, nil
}

// openWriter opens the single write connection, switches the database to
// WAL mode, brings the schema up to date and prepares the writer.
func (s *SQLite) openWriter(ctx context.Context, base string, cfg sqliteConfig) error {
	var err error
	// With the WAL syncer, COMMIT only writes the frames (NORMAL); the
	// syncer makes them durable before anyone is answered.
	wsync := cfg.syncMode
	if cfg.pipelined {
		wsync = "NORMAL"
	}
	s.wdb, err = sql.Open("sqlite", base+"?_pragma=busy_timeout("+cfg.busyMS+")&_pragma=synchronous("+wsync+")&_pragma=wal_autocheckpoint(0)&_pragma=temp_store(memory)")
	if err != nil {
		return fmt.Errorf("opening write connection: %w", err)
	}
	s.wdb.SetMaxOpenConns(1)
	s.wdb.SetMaxIdleConns(1)
	s.wdb.SetConnMaxLifetime(0)
	s.wdb.SetConnMaxIdleTime(0)
	wconn, err := s.wdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening write connection: %w", err)
	}
	var mode string
	if err := wconn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
		_ = wconn.Close()
		return fmt.Errorf("enabling WAL: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		_ = wconn.Close()
		return fmt.Errorf("enabling WAL: journal mode is %q", mode)
	}
	if err := migrate(ctx, wconn); err != nil {
		_ = wconn.Close()
		return err
	}
	s.w, err = newWriter(wconn, cfg.maxBatch)
	if err != nil {
		_ = wconn.Close()
		return fmt.Errorf("preparing write statements: %w", err)
	}
	return nil
}

// openReaders opens the pool of query_only read connections and prepares
// the fixed read statements.
func (s *SQLite) openReaders(ctx context.Context, base string, cfg sqliteConfig) error {
	var err error
	s.rdb, err = sql.Open("sqlite", base+"?_pragma=busy_timeout("+cfg.busyMS+")&_query_only=1")
	if err != nil {
		return fmt.Errorf("opening read connections: %w", err)
	}
	s.rdb.SetMaxOpenConns(cfg.readConns)
	s.rdb.SetMaxIdleConns(cfg.readConns)
	s.rdb.SetConnMaxLifetime(0)
	s.rdb.SetConnMaxIdleTime(0)
	for _, p := range []struct {
		dst **sql.Stmt
		q   string
	}{
		{&s.getTask, `SELECT body, artifacts FROM tasks WHERE id = ? AND owner = ?`},
		{&s.getContext, `SELECT cwd, state, created_at, updated_at FROM contexts WHERE owner = ? AND id = ?`},
		{&s.countTasks, `SELECT n FROM task_counts WHERE owner = ? AND context_id = ? AND state = ?`},
		{&s.lastEvent, lastEventSQL},
		{&s.readEvents, readEventsSQL},
		{&s.getSent, getSentSQL},
	} {
		if *p.dst, err = s.rdb.PrepareContext(ctx, p.q); err != nil {
			return fmt.Errorf("preparing read statements: %w", err)
		}
	}
	return nil
}
