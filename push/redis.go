package push

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

// RedisQueue is the `redis-streams` queue (PUSH-6). Jobs are first written
// to the SQLite outbox in the same transaction as the state change; a relay
// moves them to the stream (at least once: a crash between XADD and the
// outbox delete sends a duplicate, never loses one). Workers read with
// XREADGROUP, acknowledge with XACK, put delayed retries in a sorted set
// that a Lua script promotes atomically, reclaim entries idle past the lease
// with XAUTOCLAIM, and write dead letters to a stream.
type RedisQueue struct {
	rdb    redis.UniversalClient
	opts   RedisOptions
	outbox store.PushStore // relay source; nil: no relay (CLI, tests)
	logger *zap.Logger

	origin    string // random id of this queue, stamped on the jobs it relays
	wake      chan struct{}
	reclaimed chan redis.XMessage
	ownsConn  bool
	closeMu   sync.Once
	probe     store.RedisProbe // the readiness check's client (check.go)
}

// NewRedisQueue returns the queue; outbox may be nil when this process only
// consumes (or only manages dead letters).
func NewRedisQueue(rdb redis.UniversalClient, opts RedisOptions, outbox store.PushStore, logger *zap.Logger) *RedisQueue {
	if logger == nil {
		logger = zap.NewNop()
	}
	return &RedisQueue{rdb: rdb, opts: opts.WithDefaults(), outbox: outbox, logger: logger, origin: randomOrigin(),
		wake: make(chan struct{}, 1), reclaimed: make(chan redis.XMessage, 1024)}
}

// OpenRedisQueue connects with opts.URL; Close closes the connection.
func OpenRedisQueue(opts RedisOptions, outbox store.PushStore, logger *zap.Logger) (*RedisQueue, error) {
	rdb, err := NewRedisClient(opts.URL)
	if err != nil {
		return nil, err
	}
	q := NewRedisQueue(rdb, opts, outbox, logger)
	q.ownsConn = true
	return q, nil
}

// Options returns the effective options.
func (q *RedisQueue) Options() RedisOptions { return q.opts }

// Prepare creates the consumer group (and stream) when missing and, with
// an outbox, releases leases left by a previous process of this node.
func (q *RedisQueue) Prepare(ctx context.Context) error {
	if err := q.ensureGroup(ctx); err != nil {
		return err
	}
	if q.outbox != nil {
		if _, err := q.outbox.ReleasePushLeases(ctx); err != nil {
			return err
		}
	}
	return nil
}

func (q *RedisQueue) ensureGroup(ctx context.Context) error {
	if err := redisstream.EnsureGroup(ctx, q.rdb, q.opts.Stream, q.opts.Group); err != nil {
		return fmt.Errorf("creating the push consumer group: %w", redisstream.ShortErr(err))
	}
	return nil
}

// Close closes the connection when the queue opened it.
func (q *RedisQueue) Close() error {
	var err error
	q.closeMu.Do(func() {
		q.probe.Close()
		if q.ownsConn {
			err = q.rdb.Close()
		}
	})
	return err
}

var (
	_ Queue         = (*RedisQueue)(nil)
	_ configChecker = (*RedisQueue)(nil)
)

// randomOrigin returns a random id for a queue instance.
func randomOrigin() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
