package caddymodule

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/keyfile"
	"github.com/caddy-a2a/caddy-a2a/push"
)

func init() {
	caddy.RegisterModule(App{})
}

// App is the `a2a` app: it owns what every A2A endpoint of the process
// shares — the task store and the runtime of live turns and contexts — so
// that they are opened once and survive configuration reloads. Without an
// `a2a` global block it runs with its defaults.
type App struct {
	// DataDir holds a2a.db (the SQLite task store), the page-token key and,
	// later, the push key ring and stored artifacts. Relative paths are
	// resolved against the working directory. One gateway process owns it:
	// it is locked (<data_dir>/lock) when the config starts, and a second
	// gateway on it fails to start (OPS-6). Validation does not touch it.
	// Default: "./data".
	DataDir string `json:"data_dir,omitempty"`

	// Store selects the task store: "sqlite" (the embedded default, one
	// instance per data directory) or "redis" (shared by several
	// instances, SCALE-1; configured by Redis).
	Store string `json:"store,omitempty"`

	// Redis configures the "redis" store.
	Redis *StoreRedis `json:"redis,omitempty"`

	// Durability is "full" (default: every commit is fsynced, SQLite
	// synchronous=FULL) or "normal" (synchronous=NORMAL: faster, but the
	// last commits can be lost on power loss).
	Durability string `json:"durability,omitempty"`

	// ShutdownTimeout is how long running turns may finish when the process
	// exits before they are canceled and marked failed (OPS-3). Keep it at
	// most the server's grace_period. Default: 10s.
	ShutdownTimeout caddy.Duration `json:"shutdown_timeout,omitempty"`

	// Retention prunes old tasks, idle contexts and dead letters in the
	// background (OPS-5). Default: nothing is pruned.
	Retention *RetentionConfig `json:"retention,omitempty"`
	// RedisRPC serves the config's only a2a handler over Redis Streams
	// JSON-RPC (XPORT-5); see RedisRPCConfig. The block may instead sit in
	// the a2a handler. Default: off.
	RedisRPC *RedisRPCConfig `json:"redis_rpc,omitempty"`

	// ShareListeners lets this gateway serve an address another gateway
	// process on the same host (and network namespace) already serves, for
	// deliberate same-host scale-out: Caddy binds with SO_REUSEPORT and the
	// kernel spreads connections over both, so they must share a store
	// (`store redis`). Without it a gateway refuses to start on an address
	// a running one holds, naming the address (OPS-9); a gateway with it
	// neither takes nor checks that lock. Default: false.
	ShareListeners bool `json:"share_listeners,omitempty"`

	shared *sharedState
	key    string
	logger *zap.Logger
	ctx    caddy.Context

	// Push engines this config uses (push.go): pool keys and references.
	pushKeys     []string
	pushSettings []push.Settings // per pushKeys entry, to refuse conflicting sites
	pushRefs     []*pushEngineRef

	// Redis Streams JSON-RPC consumers of this config (redisrpc.go);
	// Caddy provisions, starts and stops one config from one goroutine.
	redisRPCs   []*redisRPCRun
	grpcListens []*AgentHandler // handlers with grpc listen, listening from Start (agent_grpc_listen.go)
	// grpcListening is set once Start has opened every grpc listen
	// listener (readiness: "starting" before); a pointer, as App is
	// copied by value before provisioning.
	grpcListening *atomic.Bool

	// The multi-agent sites of this config (sites.go, TURN-10): shared
	// limits counters and the tenant registry of the frame carriers.
	site *siteState
	// listenKeys are the address locks this config holds (listeners.go).
	listenKeys []string
	// ready answers readiness probes (readiness.go, OPS-8).
	ready *readyState
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a",
		New: func() caddy.Module { return new(App) },
	}
}

// sharedState is what one data directory holds for the whole process. It
// is built when a configuration is provisioned without touching the
// directory — `caddy validate` and `caddy adapt --validate` provision
// too — and opened by App.Start (open): the directory lock, the page-token
// key, the SQLite store and crash recovery (OPS-6).
type sharedState struct {
	store *store.Deferred
	hub   *agent.Hub
	// pageTokenKey is filled in by open (the handlers keep the slice).
	pageTokenKey []byte
	// dataDir is the absolute data directory (artifacts/ and inputs/ live there).
	dataDir    string
	durability string
	// redis is set for `store redis` (store_redis.go).
	redis *StoreRedis

	openOnce sync.Once
	openErr  error
	lock     *store.DirLock

	// pruner runs the retention passes of the directory (OPS-5).
	pruner pruner
}

// Destruct closes the runtime then the store, once the last user is gone,
// and only then releases the directory.
func (s *sharedState) Destruct() error {
	s.pruner.stop()
	err := errors.Join(s.hub.Close(), s.store.Close())
	return errors.Join(err, s.lock.Close())
}

var sharedStates = caddy.NewUsagePool()

// validate checks the option values (the global a2a option of the
// Caddyfile runs it too, so both config forms get the same errors).
func (a *App) validate() error {
	if err := a.validateStore(); err != nil {
		return err
	}
	switch a.Durability {
	case "", "full", "normal":
	default:
		return fmt.Errorf("durability: must be full or normal, not %q", a.Durability)
	}
	if a.Retention != nil {
		return a.Retention.validate()
	}
	return nil
}

// Provision resolves the data directory and builds (or reuses) its shared
// runtime. Nothing is read or written in the directory here: that waits
// for Start, which validation never calls.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	a.ctx = ctx
	a.site = &siteState{}
	a.ready = &readyState{}
	a.grpcListening = new(atomic.Bool)
	if a.DataDir == "" {
		a.DataDir = "./data"
	}
	if a.Store == "" {
		a.Store = "sqlite"
	}
	if a.Durability == "" {
		a.Durability = "full"
	}
	if err := a.validate(); err != nil {
		return err
	}
	dir, err := filepath.Abs(caddy.NewReplacer().ReplaceAll(a.DataDir, ""))
	if err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	a.key = a.sharedKey(dir)
	val, _, err := sharedStates.LoadOrNew(a.key, func() (caddy.Destructor, error) {
		sh := newShared(dir, a.Durability)
		if a.Store == "redis" {
			sh.redis = a.Redis
		}
		return sh, nil
	})
	if err != nil {
		a.key = ""
		return err
	}
	a.shared = val.(*sharedState)
	denyStatePaths(dir) // INPUT-1a
	denyCaddyState(ctx)
	drain := 10 * time.Second
	if a.ShutdownTimeout != 0 {
		drain = time.Duration(a.ShutdownTimeout)
	}
	a.shared.hub.SetDrainTimeout(drain)
	if a.RedisRPC != nil {
		if err := a.RedisRPC.validateAdvertise(true); err != nil {
			return err
		}
		return a.addRedisRPC(a.RedisRPC, nil)
	}
	return nil
}

// newShared builds the runtime of dir over a store that is not open yet.
func newShared(dir, durability string) *sharedState {
	st := store.NewDeferred()
	// The deferred hub recovers nothing: open recovers, under the lock.
	hub := agent.NewDeferredHub(st)
	return &sharedState{store: st, hub: hub, pageTokenKey: make([]byte, 32), dataDir: dir, durability: durability}
}

// open takes the data directory (OPS-6), then reads its page-token key,
// opens the store and fails the tasks a crashed process left running
// (RPC-12). Once per shared state; a reload finds it open.
func (s *sharedState) open() error {
	s.openOnce.Do(func() {
		s.openErr = s.doOpen()
		if s.openErr != nil {
			s.store.Fail(s.openErr)
		}
	})
	return s.openErr
}

func (s *sharedState) doOpen() error {
	if s.redis != nil {
		return s.openRedis()
	}
	lock, err := store.LockDir(s.dataDir)
	if errors.Is(err, store.ErrDirLocked) {
		// The operator's own path, at startup: say which directory.
		return fmt.Errorf("data directory %s is in use by another caddy-a2a process", s.dataDir)
	}
	if err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	if err := agent.MarkStateDir(s.dataDir); err != nil { // INPUT-1a: no instance reads another's data dir
		_ = lock.Close()
		return fmt.Errorf("data_dir: %w", err)
	}
	key, err := loadOrCreateKey(filepath.Join(s.dataDir, "pagetoken.key"))
	if err != nil {
		_ = lock.Close()
		return err
	}
	st, err := store.OpenSQLite(filepath.Join(s.dataDir, "a2a.db"), store.SQLiteOptions{Durability: s.durability})
	if err != nil {
		_ = lock.Close()
		return err
	}
	if _, err := st.FailInterrupted(context.Background(), agent.InterruptedMessage, time.Now()); err != nil {
		_ = st.Close()
		_ = lock.Close()
		return fmt.Errorf("recovering interrupted tasks: %w", err)
	}
	copy(s.pageTokenKey, key)
	s.lock = lock
	return s.store.Open(st)
}

// wait blocks until the shared state is open (nil) or failed to open, or
// ctx ends; requests wait here because the http app may start before the
// a2a app.
func (s *sharedState) wait(ctx context.Context) error { return s.store.Wait(ctx) }

// loadOrCreateKey reads a 32-byte secret under the key-file rule
// (internal/keyfile: mode 0600), creating it with mode 0600 first.
func loadOrCreateKey(path string) ([]byte, error) {
	b, err := keyfile.Read(path, 4096)
	if err == nil && len(b) >= 32 {
		return b[:32], nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("the page-token key in the data directory: %w", err)
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the page-token key: %w", err)
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return nil, fmt.Errorf("data_dir: cannot write the page-token key: %w", err)
	}
	return key, nil
}

// Start implements caddy.App: it opens the data directory's shared state
// unless a previous config already did (see open), starts the push
// workers of this config (those shared with the previous config already
// run) and warns about sites open beyond loopback without auth (AUTH-6).
func (a *App) Start() error {
	if err := a.claimListeners(); err != nil {
		return err
	}
	if a.shared != nil {
		if err := a.shared.open(); err != nil {
			return err
		}
	}
	warnNoAuth(a.ctx, a.logger)
	if err := a.startRetention(); err != nil {
		return err
	}
	if err := a.startPush(); err != nil {
		return err
	}
	if err := a.startGRPCListens(); err != nil {
		return err
	}
	if a.grpcListening != nil {
		a.grpcListening.Store(true)
	}
	return a.startRedisRPC()
}

// startRetention hands this config's retention to the data directory's
// pruner, starting it on first use (OPS-5).
func (a *App) startRetention() error {
	if a.shared == nil {
		return nil
	}
	if a.Retention == nil {
		a.shared.pruner.update(nil)
		return nil
	}
	r := a.Retention.retention(a.shared.dataDir)
	a.shared.pruner.update(&r)
	metrics, err := agentMetrics(a.ctx)
	if err != nil {
		return err
	}
	if p := a.shared.store.Capabilities().Pruner; p != nil {
		a.shared.pruner.start(p, metrics, a.logger.Named("retention"))
	}
	return nil
}

// Stop implements caddy.App (OPS-3). On a reload it does nothing: the next
// config already shares the runtime and the push workers, so running turns,
// their streams and the workers go on. When the process exits it makes the
// runtime refuse new turns with a clear error; running turns go on while
// the HTTP servers wait out their grace_period for open requests, and
// Cleanup then drains them.
func (a *App) Stop() error {
	a.stopRedisRPC() // reading stops; requests in flight finish or stay pending
	if caddy.Exiting() && a.shared != nil {
		a.shared.hub.StopAccepting()
	}
	return nil
}

// Cleanup releases the push engines and the shared state. On a reload
// neither is the last reference. On exit, in this order: the runtime is
// closed — running turns get up to shutdown_timeout to finish, the rest end
// FAILED, backend processes are terminated — then the push workers stop (so
// the notifications of turns that ended during the drain are sent; those
// not sent stay queued for the next start), then the store is closed.
func (a *App) Cleanup() error {
	a.stopRedisRPC() // when Start failed after starting some
	a.releaseListeners()
	if a.key == "" {
		return a.releasePush()
	}
	if n, ok := sharedStates.References(a.key); ok && n == 1 && a.shared != nil {
		// Last user: drain the turns first (their final states queue push
		// jobs), then stop the push workers, and only then close the store
		// they read from (in Destruct).
		_ = a.shared.hub.Close()
	}
	perr := a.releasePush()
	_, err := sharedStates.Delete(a.key)
	a.key = ""
	return errors.Join(perr, err)
}

var (
	_ caddy.App          = (*App)(nil)
	_ caddy.Provisioner  = (*App)(nil)
	_ caddy.CleanerUpper = (*App)(nil)
)
