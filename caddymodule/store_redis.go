package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// go-redis logs dial failures and the like on stderr in its own plain-text
// format, which would mix into Caddy's JSON log: they go to Caddy's log at
// debug level instead (the start-up error names the address and reason,
// OPS-9). go-redis's messages carry addresses, never passwords.
func init() { redis.SetLogger(redisLogger{}) }

// redisLogger is go-redis's logger on Caddy's current default logger.
type redisLogger struct{}

// Printf implements go-redis's internal.Logging.
func (redisLogger) Printf(_ context.Context, format string, v ...any) {
	if l := caddy.Log(); l.Core().Enabled(zapcore.DebugLevel) {
		l.Named("a2a.redis").Debug(fmt.Sprintf(format, v...))
	}
}

// StoreRedis configures `store redis` (SCALE-1…3): the shared task store
// of several gateway instances.
type StoreRedis struct {
	// URLs locate Redis: one redis://[user:pass@]host:port/db, rediss://…,
	// unix:///path, redis+sentinel://[user:pass@]s1:26379,s2:26379/MASTER[/db]
	// (or redis://sentinel:26379?master_name=MASTER), or several URLs: the
	// seed nodes of a Redis Cluster. Placeholders such as {env.REDIS_URL}
	// are resolved at start. Required.
	URLs []string `json:"urls,omitempty"`
	// KeyPrefix starts every key the store writes; instances that share
	// tasks must use the same one. Default "a2a:".
	KeyPrefix string `json:"key_prefix,omitempty"`
	// MaxSharedBlobBytes caps one value the store keeps (a context's
	// backend state). Default 8 MiB.
	MaxSharedBlobBytes int64 `json:"max_shared_blob_bytes,omitempty"`
	// InstanceLease is this instance's heartbeat lease (SCALE-2): renewed
	// every third of it; once it ended, another instance marks the tasks
	// this one left running FAILED. Default 15s, at least 1s.
	InstanceLease caddy.Duration `json:"instance_lease,omitempty"`
	// EventLogTTL is how long the event log of a finished task (RPC-17
	// resumable streams) stays in Redis: a resume after it gets the task
	// snapshot. Default 10m; negative (Caddyfile `off`): kept as long as
	// the task.
	EventLogTTL caddy.Duration `json:"event_log_ttl,omitempty"`
}

// sharedKey is the usage-pool key of the shared state: the data directory,
// plus the Redis deployment for `store redis` (so that a reload that
// switches store opens the new one).
func (a *App) sharedKey(dir string) string {
	if a.Store != "redis" || a.Redis == nil {
		return dir
	}
	return strings.Join(append([]string{"redis", dir, a.Redis.KeyPrefix}, a.Redis.URLs...), "|")
}

// The messages of the store redis durations, shared with the Caddyfile
// parser (which refuses an explicit 0: a JSON config's "unset").
var (
	errInstanceLease = errors.New("store redis: instance_lease must be at least 1s")
	errEventLogTTL   = errors.New("store redis: event_log_ttl must be at least 1s (or off)")
)

// validateStore checks the store selection.
func (a *App) validateStore() error {
	switch a.Store {
	case "", "sqlite":
		return nil
	case "redis":
		if a.Redis == nil || len(a.Redis.URLs) == 0 {
			return errors.New("store redis: url is required")
		}
		if a.Redis.MaxSharedBlobBytes < 0 {
			return errors.New("store redis: max_shared_blob_bytes must not be negative")
		}
		if a.Redis.InstanceLease != 0 && time.Duration(a.Redis.InstanceLease) < time.Second {
			return errInstanceLease
		}
		if a.Redis.EventLogTTL > 0 && time.Duration(a.Redis.EventLogTTL) < time.Second {
			return errEventLogTTL
		}
		return nil
	}
	return fmt.Errorf("store: unknown store %q (want sqlite or redis)", a.Store)
}

// openRedis opens the shared state of `store redis`: the data directory
// (push key ring, artifacts, inputs) is not locked — several instances
// may run — and crash recovery is by instance leases (SCALE-2): the tasks
// left WORKING by an instance are failed once its lease ended.
func (s *sharedState) openRedis() error {
	if err := os.MkdirAll(s.dataDir, 0o700); err != nil {
		return fmt.Errorf("data_dir: cannot create the data directory %s: %w", s.dataDir, err)
	}
	if err := agent.MarkStateDir(s.dataDir); err != nil { // INPUT-1a
		return fmt.Errorf("data_dir: %w", err)
	}
	repl := caddy.NewReplacer()
	opts := store.RedisOptions{KeyPrefix: s.redis.KeyPrefix, MaxSharedBlobBytes: s.redis.MaxSharedBlobBytes,
		InstanceLease: time.Duration(s.redis.InstanceLease), InterruptedMessage: agent.InterruptedMessage,
		EventLogTTL: time.Duration(s.redis.EventLogTTL)}
	for _, u := range s.redis.URLs {
		opts.URLs = append(opts.URLs, repl.ReplaceAll(u, ""))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := store.OpenRedis(ctx, opts)
	if err != nil {
		return err
	}
	key, err := st.PageTokenKey(ctx)
	if err != nil {
		_ = st.Close()
		return err
	}
	copy(s.pageTokenKey, key)
	return s.store.Open(st)
}
