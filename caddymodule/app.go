package caddymodule

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
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
	// resolved against the working directory. Default: "./data".
	DataDir string `json:"data_dir,omitempty"`

	// Store selects the task store. Only "sqlite" (the embedded default) is
	// available in this version.
	Store string `json:"store,omitempty"`

	// Durability is "full" (default: every commit is fsynced, SQLite
	// synchronous=FULL) or "normal" (synchronous=NORMAL: faster, but the
	// last commits can be lost on power loss).
	Durability string `json:"durability,omitempty"`

	// ShutdownTimeout is how long running turns may finish when the process
	// exits before they are canceled and marked failed (OPS-3). Keep it at
	// most the server's grace_period. Default: 10s.
	ShutdownTimeout caddy.Duration `json:"shutdown_timeout,omitempty"`

	shared *sharedState
	key    string
	logger *zap.Logger

	// Push engines this config uses (push.go): pool keys and references.
	pushKeys     []string
	pushSettings []push.Settings // per pushKeys entry, to refuse conflicting sites
	pushRefs     []*pushEngineRef
}

// CaddyModule returns the Caddy module information.
func (App) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a",
		New: func() caddy.Module { return new(App) },
	}
}

// sharedState is what one data directory holds open for the whole process.
type sharedState struct {
	store        store.Store
	hub          *agent.Hub
	pageTokenKey []byte
	// dataDir is the absolute data directory (artifacts/ and inputs/ live there).
	dataDir string
}

// Destruct closes the runtime then the store, once the last user is gone.
func (s *sharedState) Destruct() error {
	return errors.Join(s.hub.Close(), s.store.Close())
}

var sharedStates = caddy.NewUsagePool()

// Provision opens (or reuses) the store and runtime of the data directory.
func (a *App) Provision(ctx caddy.Context) error {
	a.logger = ctx.Logger()
	if a.DataDir == "" {
		a.DataDir = "./data"
	}
	if a.Store == "" {
		a.Store = "sqlite"
	}
	if a.Durability == "" {
		a.Durability = "full"
	}
	if a.Store != "sqlite" {
		return fmt.Errorf("store: unknown store %q (want sqlite)", a.Store)
	}
	if a.Durability != "full" && a.Durability != "normal" {
		return fmt.Errorf("durability: must be full or normal, not %q", a.Durability)
	}
	dir, err := filepath.Abs(caddy.NewReplacer().ReplaceAll(a.DataDir, ""))
	if err != nil {
		return fmt.Errorf("data_dir: %w", err)
	}
	a.key = dir
	val, _, err := sharedStates.LoadOrNew(dir, func() (caddy.Destructor, error) {
		return openShared(dir, a.Durability)
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
	return nil
}

func openShared(dir, durability string) (*sharedState, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, errors.New("data_dir: cannot create the data directory")
	}
	if err := agent.MarkStateDir(dir); err != nil { // INPUT-1a: no instance reads another's data dir
		return nil, fmt.Errorf("data_dir: %w", err)
	}
	key, err := loadOrCreateKey(filepath.Join(dir, "pagetoken.key"))
	if err != nil {
		return nil, err
	}
	st, err := store.OpenSQLite(filepath.Join(dir, "a2a.db"), store.SQLiteOptions{Durability: durability})
	if err != nil {
		return nil, err
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &sharedState{store: st, hub: hub, pageTokenKey: key, dataDir: dir}, nil
}

// loadOrCreateKey reads a 32-byte secret, creating it with mode 0600 first.
func loadOrCreateKey(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil && len(b) >= 32 {
		return b[:32], nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("reading the page-token key in the data directory failed")
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("generating the page-token key: %w", err)
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return nil, errors.New("writing the page-token key in the data directory failed")
	}
	return key, nil
}

// Start implements caddy.App: it starts the push workers of this config
// (those shared with the previous config already run). The shared state is
// already running.
func (a *App) Start() error { return a.startPush() }

// Stop implements caddy.App (OPS-3). On a reload it does nothing: the next
// config already shares the runtime and the push workers, so running turns,
// their streams and the workers go on. When the process exits it makes the
// runtime refuse new turns with a clear error; running turns go on while
// the HTTP servers wait out their grace_period for open requests, and
// Cleanup then drains them.
func (a *App) Stop() error {
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
