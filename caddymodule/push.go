package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// Push queue names.
const (
	pushQueueLocal = "local-file"
	pushQueueRedis = "redis-streams"
)

// PushConfig turns push notifications on for an agent handler (gateway.md
// §8): the four config methods, the inline config of SendMessage,
// capabilities.pushNotifications on the card, and a delivery on every
// turn-ending state. Deliveries are made by workers owned by the a2a app,
// one set per data directory and queue, shared across config reloads.
type PushConfig struct {
	// Queue is where deliveries wait: "local-file" (the default: an outbox
	// table in the SQLite database of the data directory, single node) or
	// "redis-streams" (jobs are relayed from the outbox to a Redis stream
	// consumed by a consumer group, so several gateways share the work).
	Queue string `json:"queue,omitempty"`

	// Redis configures the redis-streams queue.
	Redis *PushRedisConfig `json:"redis,omitempty"`

	// AllowPrivateNetworks lists CIDRs (or IPs) callbacks may reach even
	// though they are not public: intranets and tests, e.g. 127.0.0.0/8.
	// Items may hold several CIDRs separated by spaces or commas (from an
	// environment variable). Default: none; every loopback, private,
	// link-local, CGNAT, multicast… address is refused.
	AllowPrivateNetworks []string `json:"allow_private_networks,omitempty"`

	// Timeout bounds one delivery attempt. Default: 5s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxAttempts is how many attempts a delivery gets before it becomes
	// a dead letter. Default: 5.
	MaxAttempts int `json:"max_attempts,omitempty"`

	// RetryInitial is the delay before the second attempt; it doubles per
	// attempt. Default: 1s.
	RetryInitial caddy.Duration `json:"retry_initial,omitempty"`

	// RetryMax caps a retry delay, including a receiver's Retry-After.
	// Default: 60s.
	RetryMax caddy.Duration `json:"retry_max,omitempty"`

	// RetryJitter is the relative random spread of a delay, between 0 and 1.
	// Default: 0.2 (±20 %).
	RetryJitter float64 `json:"retry_jitter,omitempty"`

	// Workers is how many deliveries run at once in this process.
	// Default: 16.
	Workers int `json:"workers,omitempty"`

	// Lease is how long a claimed local-file job stays invisible to other
	// claims before it is taken again. Default: 60s.
	Lease caddy.Duration `json:"lease,omitempty"`

	// MaxConfigsPerTask caps the push configs of one task (PUSH-1): one
	// more, by CreateTaskPushNotificationConfig or inline on SendMessage,
	// is InvalidParamsError naming the limit; replacing an existing config
	// id is allowed. It applies to this site only. Default: 10.
	MaxConfigsPerTask int `json:"max_configs_per_task,omitempty"`
}

// PushRedisConfig configures the redis-streams queue (PUSH-6).
type PushRedisConfig struct {
	// URL of Redis: redis://[user:pass@]host:port/db, rediss://…,
	// redis://sentinel:26379?master_name=NAME for Sentinel, or
	// redis://host1:port?addr=host2:port for Cluster (use a hash tag such
	// as {a2a} in the key names so they share a slot). Supports {env.*}.
	// Required.
	URL string `json:"redis_url,omitempty"`
	// Stream is the job stream. Default: iac-code:a2a:push.
	Stream string `json:"stream,omitempty"`
	// RetryKey is the sorted set of delayed retries. Default: iac-code:a2a:push:retry.
	RetryKey string `json:"retry_key,omitempty"`
	// DeadStream receives dead letters. Default: iac-code:a2a:push:dead.
	DeadStream string `json:"dead_stream,omitempty"`
	// ConsumerGroup is the consumer group shared by the gateways. Default: iac-code-push.
	ConsumerGroup string `json:"consumer_group,omitempty"`
	// ConsumerName names this process in the group. Default: host name and pid.
	ConsumerName string `json:"consumer_name,omitempty"`
	// LeaseTimeoutMS is how long, in milliseconds, an entry read by a
	// consumer that never acknowledged it waits before another consumer
	// claims it (XAUTOCLAIM). Default: 300000.
	LeaseTimeoutMS int64 `json:"lease_timeout_ms,omitempty"`
}

// settings converts the delivery settings.
func (p *PushConfig) settings() (push.Settings, error) {
	allow, err := push.ParseCIDRs(p.AllowPrivateNetworks...)
	if err != nil {
		return push.Settings{}, fmt.Errorf("push: allow_private_networks: %w", err)
	}
	if p.MaxAttempts < 0 {
		return push.Settings{}, errors.New("push: max_attempts must be at least 1")
	}
	if p.MaxConfigsPerTask < 0 {
		return push.Settings{}, errors.New("push: max_configs_per_task must be at least 1")
	}
	if p.RetryJitter < 0 || p.RetryJitter > 1 {
		return push.Settings{}, errors.New("push: retry_jitter must be between 0 and 1")
	}
	if p.RetryMax > 0 && p.RetryInitial > p.RetryMax {
		return push.Settings{}, errors.New("push: retry_initial must not exceed retry_max")
	}
	return push.Settings{
		Policy:  &push.Policy{Allow: allow},
		Timeout: time.Duration(p.Timeout),
		Retry: push.RetryPolicy{Initial: time.Duration(p.RetryInitial), Max: time.Duration(p.RetryMax),
			Jitter: p.RetryJitter, MaxAttempts: p.MaxAttempts},
	}, nil
}

// redisOptions resolves placeholders and fills defaults.
func (p *PushConfig) redisOptions() (push.RedisOptions, error) {
	if p.Redis == nil || p.Redis.URL == "" {
		return push.RedisOptions{}, errors.New("push: queue redis-streams needs redis_url")
	}
	if p.Redis.LeaseTimeoutMS < 0 {
		return push.RedisOptions{}, errors.New("push: lease_timeout_ms must be positive")
	}
	repl := caddy.NewReplacer()
	return push.RedisOptions{
		URL:        repl.ReplaceAll(p.Redis.URL, ""),
		Stream:     p.Redis.Stream,
		RetryKey:   p.Redis.RetryKey,
		DeadStream: p.Redis.DeadStream,
		Group:      p.Redis.ConsumerGroup,
		Consumer:   p.Redis.ConsumerName,
		Lease:      time.Duration(p.Redis.LeaseTimeoutMS) * time.Millisecond,
	}.WithDefaults(), nil
}

// pushEngines holds one running engine per data directory and queue,
// reference-counted so a reload reuses the running workers.
var pushEngines = caddy.NewUsagePool()

type pushEngineRef struct {
	engine *push.Engine
	queue  push.Queue
	keys   *push.KeyRing // empty until load
	dir    string

	loadOnce sync.Once
	loadErr  error
	loaded   chan struct{} // closed by load
}

// load reads the key ring of the data directory into the engine's ring,
// once; App.Start calls it after the directory is locked and open.
func (r *pushEngineRef) load() error {
	r.loadOnce.Do(func() {
		defer close(r.loaded)
		kr, err := loadKeyRing(r.dir)
		if err != nil {
			r.loadErr = err
			return
		}
		r.keys.Load(kr)
	})
	return r.loadErr
}

// wait blocks until the key ring is loaded (nil) or failed to load, or ctx
// ends: the handler's requests may come before App.Start loaded it.
func (r *pushEngineRef) wait(ctx context.Context) error {
	select {
	case <-r.loaded:
		return r.loadErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Destruct stops the workers and closes the queue once the last config
// using them is gone.
func (r *pushEngineRef) Destruct() error {
	return errors.Join(r.engine.Stop(10*time.Second), r.queue.Close())
}

// loadKeyRing returns the key ring of the data directory: from A2A_PUSH_KEYRING
// when set (read-only), else <data_dir>/push.keys (created 0600).
func loadKeyRing(dir string) (*push.KeyRing, error) {
	if v := os.Getenv(push.KeyRingEnv); v != "" {
		kr, err := push.ParseKeyRing([]byte(v))
		if err != nil {
			return nil, fmt.Errorf("push: %s: %w", push.KeyRingEnv, err)
		}
		return kr, nil
	}
	kr, err := push.LoadOrCreateKeyRing(filepath.Join(dir, "push.keys"))
	if err != nil {
		return nil, fmt.Errorf("push: %w", err)
	}
	return kr, nil
}

// pushEngine returns (creating it on first use) the engine of this app's
// data directory for cfg, applies cfg's delivery settings, and registers it
// so the app loads its key ring, starts it and releases it on Cleanup.
func (a *App) pushEngine(cfg *PushConfig, logger *zap.Logger) (*pushEngineRef, error) {
	settings, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	queue := cfg.Queue
	if queue == "" {
		queue = pushQueueLocal
	}
	var ps store.PushStore = a.shared.store
	dir := a.shared.dataDir
	var key string
	var ropts push.RedisOptions
	switch queue {
	case pushQueueLocal:
		key = "local|" + dir
	case pushQueueRedis:
		if ropts, err = cfg.redisOptions(); err != nil {
			return nil, err
		}
		key = strings.Join([]string{"redis", dir, ropts.URL, ropts.Stream, ropts.RetryKey, ropts.DeadStream, ropts.Group, ropts.Consumer, strconv.FormatInt(int64(ropts.Lease), 10)}, "|")
	default:
		return nil, fmt.Errorf("push: unknown queue %q (want %s or %s)", queue, pushQueueLocal, pushQueueRedis)
	}
	val, _, err := pushEngines.LoadOrNew(key, func() (caddy.Destructor, error) {
		// The data directory's key ring is loaded by App.Start (OPS-6).
		kr := new(push.KeyRing)
		var q push.Queue
		if queue == pushQueueRedis {
			rq, err := push.OpenRedisQueue(ropts, ps, logger.Named("push"))
			if err != nil {
				return nil, fmt.Errorf("push: %w", err)
			}
			q = rq
		} else {
			q = push.NewLocalQueue(ps, time.Duration(cfg.Lease))
		}
		return &pushEngineRef{engine: push.NewEngine(q, kr, cfg.Workers, settings, logger.Named("push")), queue: q, keys: kr, dir: dir, loaded: make(chan struct{})}, nil
	})
	if err != nil {
		return nil, err
	}
	ref := val.(*pushEngineRef)
	for i, k := range a.pushKeys {
		// Sites of one config share the engine of a data directory (and
		// queue): its delivery settings — the address allow-list above
		// all — must not depend on which site was provisioned last.
		if k == key && !reflect.DeepEqual(a.pushSettings[i], settings) {
			_, _ = pushEngines.Delete(key)
			return nil, errors.New("push: sites sharing a data directory and queue must use the same push settings (allow_private_networks, timeout, retries)")
		}
	}
	ref.engine.Update(settings)
	a.pushSettings = append(a.pushSettings, settings)
	a.pushKeys = append(a.pushKeys, key)
	a.pushRefs = append(a.pushRefs, ref)
	return ref, nil
}

// startPush starts the engines this config uses (idempotent: an engine
// shared with the previous config keeps running).
func (a *App) startPush() error {
	// Load every key ring first: each load ends its waiters, even when
	// another fails.
	var errs []error
	for _, r := range a.pushRefs {
		errs = append(errs, r.load())
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, r := range a.pushRefs {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.engine.Start(ctx)
		cancel()
		if err != nil {
			return fmt.Errorf("starting push workers: %w", err)
		}
	}
	return nil
}

// releasePush drops this config's references to the engines; the last
// reference stops the workers (on exit, after the turns have drained: see
// App.Cleanup). A reload therefore keeps one running worker set per engine.
func (a *App) releasePush() error {
	var errs []error
	for _, k := range a.pushKeys {
		if _, err := pushEngines.Delete(k); err != nil {
			errs = append(errs, err)
		}
	}
	a.pushKeys, a.pushRefs = nil, nil
	return errors.Join(errs...)
}

// PushStats returns the delivery counters of every push engine of this app
// (PUSH-7), keyed by queue name, for the metrics work.
func (a *App) PushStats(ctx context.Context) map[string]push.Snapshot {
	out := map[string]push.Snapshot{}
	for i, r := range a.pushRefs {
		name := pushQueueLocal
		if strings.HasPrefix(a.pushKeys[i], "redis|") {
			name = pushQueueRedis
		}
		out[name] = r.engine.Stats(ctx)
	}
	return out
}

// unmarshalPush parses the push block of the a2a directive:
//
//	push {
//		queue local-file
//		queue redis-streams {
//			redis_url <url>
//			stream <key>
//			retry_key <key>
//			dead_stream <key>
//			consumer_group <name>
//			consumer_name <name>
//			lease_timeout_ms <ms>
//		}
//		allow_private_networks <cidr…>
//		timeout <duration>
//		max_attempts <n>
//		retry_initial <duration>
//		retry_max <duration>
//		retry_jitter <0..1>
//		workers <n>
//		lease <duration>
//		max_configs_per_task <n>
//	}
func unmarshalPush(d *caddyfile.Dispenser) (*PushConfig, error) {
	p := &PushConfig{}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] && opt != "allow_private_networks" {
			return nil, d.Errf("push: duplicate option %q", opt)
		}
		seen[opt] = true
		switch opt {
		case "queue":
			if !d.NextArg() {
				return nil, d.ArgErr()
			}
			p.Queue = d.Val()
			switch p.Queue {
			case pushQueueLocal:
				if d.NextArg() || d.NextBlock(d.Nesting()) {
					return nil, d.Errf("push: queue local-file takes no options")
				}
			case pushQueueRedis:
				if d.NextArg() {
					return nil, d.ArgErr()
				}
				r, err := unmarshalPushRedis(d)
				if err != nil {
					return nil, err
				}
				p.Redis = r
			default:
				return nil, d.Errf("push: unknown queue %q (want local-file or redis-streams)", p.Queue)
			}
		case "allow_private_networks":
			args := d.RemainingArgs()
			// An empty environment variable leaves no argument: allow nothing.
			if _, err := push.ParseCIDRs(args...); err != nil {
				return nil, d.Errf("push: allow_private_networks: %v", err)
			}
			p.AllowPrivateNetworks = append(p.AllowPrivateNetworks, args...)
		case "timeout":
			if err := durationArg(d, &p.Timeout); err != nil {
				return nil, err
			}
		case "retry_initial":
			if err := durationArg(d, &p.RetryInitial); err != nil {
				return nil, err
			}
		case "retry_max":
			if err := durationArg(d, &p.RetryMax); err != nil {
				return nil, err
			}
		case "lease":
			if err := durationArg(d, &p.Lease); err != nil {
				return nil, err
			}
		case "max_attempts", "workers", "max_configs_per_task":
			n, err := intArg(d)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, d.Errf("push: %s must be at least 1", opt)
			}
			switch opt {
			case "workers":
				p.Workers = n
			case "max_configs_per_task":
				p.MaxConfigsPerTask = n
			default:
				p.MaxAttempts = n
			}
		case "retry_jitter":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return nil, d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f > 1 {
				return nil, d.Errf("push: retry_jitter must be a number between 0 and 1")
			}
			p.RetryJitter = f
		default:
			return nil, d.Errf("push: unknown option %q", opt)
		}
	}
	if p.Queue == pushQueueRedis && (p.Redis == nil || p.Redis.URL == "") {
		return nil, d.Errf("push: queue redis-streams needs redis_url")
	}
	return p, nil
}

func unmarshalPushRedis(d *caddyfile.Dispenser) (*PushRedisConfig, error) {
	r := &PushRedisConfig{}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return nil, d.Errf("push: duplicate option %q", opt)
		}
		seen[opt] = true
		var dst *string
		switch opt {
		case "redis_url":
			dst = &r.URL
		case "stream":
			dst = &r.Stream
		case "retry_key":
			dst = &r.RetryKey
		case "dead_stream":
			dst = &r.DeadStream
		case "consumer_group":
			dst = &r.ConsumerGroup
		case "consumer_name":
			dst = &r.ConsumerName
		case "lease_timeout_ms":
			n, err := intArg(d)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, d.Errf("push: lease_timeout_ms must be at least 1")
			}
			r.LeaseTimeoutMS = int64(n)
			continue
		default:
			return nil, d.Errf("push: unknown redis-streams option %q", opt)
		}
		if err := stringArg(d, dst); err != nil {
			return nil, err
		}
	}
	return r, nil
}
