package caddymodule

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// Push queue names.
const (
	pushQueueLocal = push.QueueLocal
	pushQueueRedis = push.QueueRedis
)

// PushConfig turns push notifications on for an agent handler (PUSH-1…
// PUSH-8): the four config methods, the inline config of SendMessage,
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
	// Sign are the keys that sign every delivery (PUSH-8): alg es256 or
	// eddsa, kid, key_file (a PEM private key; placeholders allowed). The
	// first signs; all are published in the JWKS (rotation: add the new key
	// first, drop the old one after the receivers' caches expire). Each
	// delivery then carries a JWT in X-A2A-Notification-JWT, and also as
	// Authorization: Bearer when the config has no authentication of its own.
	Sign []jws.SignKey `json:"sign,omitempty"`
	// SignIssuer is the iss claim of the delivery tokens. Default: the
	// card's public_url (one of them is required with sign).
	SignIssuer string `json:"sign_issuer,omitempty"`
	// SignTTL is the lifetime of a delivery token (exp − iat). Default and
	// maximum: 5m.
	SignTTL caddy.Duration `json:"sign_ttl,omitempty"`
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

// config maps the configuration to push's (placeholders unresolved).
func (p *PushConfig) config() push.Config {
	c := push.Config{
		Queue:                p.Queue,
		AllowPrivateNetworks: p.AllowPrivateNetworks,
		Timeout:              time.Duration(p.Timeout),
		MaxAttempts:          p.MaxAttempts,
		RetryInitial:         time.Duration(p.RetryInitial),
		RetryMax:             time.Duration(p.RetryMax),
		RetryJitter:          p.RetryJitter,
		Workers:              p.Workers,
		Lease:                time.Duration(p.Lease),
		MaxConfigsPerTask:    p.MaxConfigsPerTask,
		SignIssuer:           p.SignIssuer,
		SignTTL:              time.Duration(p.SignTTL),
	}
	repl := caddy.NewReplacer()
	for _, k := range p.Sign {
		k.KeyFile = repl.ReplaceKnown(k.KeyFile, "")
		k.Secret = repl.ReplaceKnown(k.Secret, "")
		c.Sign = append(c.Sign, k)
	}
	if r := p.Redis; r != nil {
		c.Redis = &push.RedisOptions{
			URL:        r.URL,
			Stream:     r.Stream,
			RetryKey:   r.RetryKey,
			DeadStream: r.DeadStream,
			Group:      r.ConsumerGroup,
			Consumer:   r.ConsumerName,
			Lease:      time.Duration(r.LeaseTimeoutMS) * time.Millisecond,
		}
	}
	return c
}

// pushEngines holds one running engine per data directory and queue,
// reference-counted so a reload reuses the running workers.
var pushEngines = caddy.NewUsagePool()

type pushEngineRef struct {
	engine *push.Engine
	queue  push.Queue
	keys   *push.KeyRing // empty until load
	dir    string
	// check pings the redis-streams queue (readiness, OPS-8); nil for
	// the local queue, which lives in the store.
	check func(context.Context) error

	loadOnce sync.Once
	loadErr  error
	loaded   chan struct{} // closed by load
}

// load reads the key ring of the data directory into the engine's ring,
// once; App.Start calls it after the directory is locked and open.
func (r *pushEngineRef) load() error {
	r.loadOnce.Do(func() {
		defer close(r.loaded)
		kr, err := push.LoadKeyRing(r.dir)
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

// pushEngine returns (creating it on first use) the engine of this app's
// data directory for cfg, applies cfg's delivery settings, and registers it
// so the app loads its key ring, starts it and releases it on Cleanup.
func (a *App) pushEngine(cfg *PushConfig, logger *zap.Logger) (*pushEngineRef, error) {
	pc := cfg.config()
	settings, err := pc.Settings()
	if err != nil {
		return nil, err
	}
	settings.Tracer = &pushTracer
	queue := pc.QueueName()
	ps := a.shared.store.Push() // the queue is built before the store opens
	dir := a.shared.dataDir
	key := "local|" + dir
	var ropts push.RedisOptions
	if queue == pushQueueRedis {
		ropts = *pc.Redis
		ropts.URL = caddy.NewReplacer().ReplaceAll(ropts.URL, "")
		ropts = ropts.WithDefaults()
		key = strings.Join([]string{"redis", dir, ropts.URL, ropts.Stream, ropts.RetryKey, ropts.DeadStream, ropts.Group, ropts.Consumer, strconv.FormatInt(int64(ropts.Lease), 10)}, "|")
	}
	val, _, err := pushEngines.LoadOrNew(key, func() (caddy.Destructor, error) {
		// The data directory's key ring is loaded by App.Start (OPS-6).
		kr := new(push.KeyRing)
		var q push.Queue
		var check func(context.Context) error
		if queue == pushQueueRedis {
			rq, err := push.OpenRedisQueue(ropts, ps, logger.Named("push"))
			if err != nil {
				return nil, fmt.Errorf("push: %w", err)
			}
			q, check = rq, rq.Check
		} else {
			q = push.NewLocalQueue(ps, pc.Lease)
		}
		return &pushEngineRef{engine: push.NewEngine(q, kr, pc.Workers, settings, logger.Named("push")), queue: q, keys: kr, dir: dir, loaded: make(chan struct{}), check: check}, nil
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
		if rq, ok := r.queue.(*push.RedisQueue); ok && err != nil {
			// OPS-9: name the Redis, without its credentials.
			return fmt.Errorf("starting push workers (queue at %s): %w", store.RedisAddress([]string{rq.Options().URL}), err)
		}
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
