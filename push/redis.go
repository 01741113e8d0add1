package push

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Defaults of RedisOptions (PUSH-6).
const (
	DefaultStream        = "iac-code:a2a:push"
	DefaultRetryKey      = "iac-code:a2a:push:retry"
	DefaultDeadStream    = "iac-code:a2a:push:dead"
	DefaultConsumerGroup = "iac-code-push"
	DefaultLeaseTimeout  = 300 * time.Second
)

// RedisOptions configure the `redis-streams` queue.
type RedisOptions struct {
	// URL is redis://…, rediss://…, redis://…?master_name=NAME (Sentinel;
	// the host is a sentinel) or redis://host1:port?addr=host2:port… (Cluster).
	URL string
	// Stream is the job stream. Default DefaultStream.
	Stream string
	// RetryKey is the sorted set of delayed retries (score: due, Unix ms).
	// Default DefaultRetryKey.
	RetryKey string
	// DeadStream receives dead letters. Default DefaultDeadStream.
	DeadStream string
	// Group is the consumer group. Default DefaultConsumerGroup.
	Group string
	// Consumer is this process's consumer name. Default: host name + pid.
	Consumer string
	// Lease is how long a delivered-but-unacknowledged entry stays with its
	// consumer before another may claim it (XAUTOCLAIM). Default 300s.
	Lease time.Duration
	// Block bounds one XREADGROUP wait (at most 1s, the default), so due
	// retries and reclaims run while the stream is idle.
	Block time.Duration
}

// WithDefaults fills zero fields.
func (o RedisOptions) WithDefaults() RedisOptions {
	if o.Stream == "" {
		o.Stream = DefaultStream
	}
	if o.RetryKey == "" {
		o.RetryKey = DefaultRetryKey
	}
	if o.DeadStream == "" {
		o.DeadStream = DefaultDeadStream
	}
	if o.Group == "" {
		o.Group = DefaultConsumerGroup
	}
	if o.Consumer == "" {
		h, _ := os.Hostname()
		if h == "" {
			h = "gateway"
		}
		o.Consumer = h + "-" + strconv.Itoa(os.Getpid())
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLeaseTimeout
	}
	if o.Block <= 0 || o.Block > time.Second {
		o.Block = time.Second
	}
	return o
}

// NewRedisClient connects to a plain, Sentinel or Cluster deployment
// according to the URL.
func NewRedisClient(raw string) (redis.UniversalClient, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss" && u.Scheme != "unix") {
		return nil, errors.New("redis_url must be a redis://, rediss:// or unix:// URL")
	}
	q := u.Query()
	switch {
	case q.Get("master_name") != "":
		o, err := redis.ParseFailoverURL(raw)
		if err != nil {
			return nil, errors.New("redis_url: invalid sentinel URL")
		}
		return redis.NewFailoverClient(o), nil
	case q.Has("addr"):
		o, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, errors.New("redis_url: invalid cluster URL")
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(raw)
	if err != nil {
		return nil, errors.New("redis_url: invalid URL")
	}
	return redis.NewClient(o), nil
}

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
	err := q.rdb.XGroupCreateMkStream(ctx, q.opts.Stream, q.opts.Group, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("creating the push consumer group: %w", redisErr(err))
	}
	return nil
}

// redisErr strips what could carry a password (go-redis errors do not,
// but a URL parse error might) and keeps the message short.
func redisErr(err error) error {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return errors.New(msg)
}

// Wake wakes the relay.
func (q *RedisQueue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// promoteScript moves due retries to the stream. Running in Redis it is
// atomic: two workers never promote the same retry.
var promoteScript = redis.NewScript(`
local items = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
local n = 0
for _, m in ipairs(items) do
	if redis.call('ZREM', KEYS[1], m) == 1 then
		redis.call('XADD', KEYS[2], '*', 'job', m)
		n = n + 1
	end
end
return n
`)

// Run relays outbox jobs, promotes due retries and reclaims idle entries.
func (q *RedisQueue) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if q.outbox != nil {
		wg.Go(func() { q.relay(ctx) })
	}
	wg.Go(func() { q.maintain(ctx) })
	wg.Wait()
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (q *RedisQueue) relay(ctx context.Context) {
	for ctx.Err() == nil {
		n, err := q.relayOnce(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			q.logger.Warn("relaying push deliveries to redis", zap.Error(err))
			sleepCtx(ctx, time.Second)
			continue
		}
		if n > 0 {
			continue
		}
		t := time.NewTimer(250 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-q.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// relayOnce moves up to 512 outbox jobs to the stream.
func (q *RedisQueue) relayOnce(ctx context.Context) (int, error) {
	js, err := q.outbox.ClaimPushJobs(ctx, time.Now(), time.Minute, 512)
	if err != nil || len(js) == 0 {
		return 0, err
	}
	pipe := q.rdb.Pipeline()
	ids := make([]string, len(js))
	for i, sj := range js {
		j := fromStoreJob(sj)
		j.Origin = q.origin
		b, err := json.Marshal(j)
		if err != nil {
			return 0, err
		}
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.opts.Stream, Values: []any{"job", string(b)}})
		ids[i] = j.ID
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("adding to the push stream: %w", redisErr(err))
	}
	// A crash here re-relays the batch after restart: duplicates, no loss.
	if err := q.outbox.AckPushJobs(context.WithoutCancel(ctx), ids...); err != nil {
		return 0, err
	}
	return len(js), nil
}

func (q *RedisQueue) maintain(ctx context.Context) {
	reclaimEvery := min(max(q.opts.Lease/4, 200*time.Millisecond), 30*time.Second)
	nextReclaim := time.Now().Add(reclaimEvery)
	for ctx.Err() == nil {
		if _, err := q.promote(ctx); err != nil && ctx.Err() == nil {
			q.logger.Warn("promoting push retries", zap.Error(err))
		}
		if time.Now().After(nextReclaim) {
			if err := q.reclaim(ctx); err != nil && ctx.Err() == nil {
				q.logger.Warn("reclaiming push deliveries", zap.Error(err))
			}
			nextReclaim = time.Now().Add(reclaimEvery)
		}
		sleepCtx(ctx, 100*time.Millisecond)
	}
}

// promote moves due retries to the stream; it returns how many.
func (q *RedisQueue) promote(ctx context.Context) (int, error) {
	n, err := promoteScript.Run(ctx, q.rdb, []string{q.opts.RetryKey, q.opts.Stream}, time.Now().UnixMilli(), 500).Int()
	if err != nil {
		return 0, redisErr(err)
	}
	return n, nil
}

// reclaim takes entries idle past the lease from dead or stuck consumers.
func (q *RedisQueue) reclaim(ctx context.Context) error {
	start := "0-0"
	for range 100 {
		msgs, next, err := q.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: q.opts.Stream, Group: q.opts.Group, Consumer: q.opts.Consumer,
			MinIdle: q.opts.Lease, Start: start, Count: 100,
		}).Result()
		if err != nil {
			if strings.Contains(err.Error(), "NOGROUP") {
				return q.ensureGroup(ctx)
			}
			return redisErr(err)
		}
		for _, m := range msgs {
			select {
			case q.reclaimed <- m:
			case <-ctx.Done():
				return nil
			}
		}
		if next == "0-0" || next == "" {
			return nil
		}
		start = next
	}
	return nil
}

// Claim returns reclaimed entries first, then new ones (XREADGROUP, bounded block).
func (q *RedisQueue) Claim(ctx context.Context, n int) ([]Job, error) {
	var msgs []redis.XMessage
	for len(msgs) < n {
		select {
		case m := <-q.reclaimed:
			msgs = append(msgs, m)
			continue
		default:
		}
		break
	}
	if len(msgs) == 0 {
		res, err := q.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
			Group: q.opts.Group, Consumer: q.opts.Consumer, Streams: []string{q.opts.Stream, ">"},
			Count: int64(n), Block: q.opts.Block,
		}).Result()
		if err != nil {
			if errors.Is(err, redis.Nil) || ctx.Err() != nil {
				return nil, nil
			}
			if strings.Contains(err.Error(), "NOGROUP") {
				return nil, q.ensureGroup(ctx)
			}
			return nil, redisErr(err)
		}
		for _, s := range res {
			msgs = append(msgs, s.Messages...)
		}
	}
	out := make([]Job, 0, len(msgs))
	for _, m := range msgs {
		j, err := decodeJob(m)
		if err != nil {
			// Unreadable entry: keep it for inspection, never retry it.
			pipe := q.rdb.TxPipeline()
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.opts.DeadStream, Values: []any{"job", fmt.Sprint(m.Values["job"]), "reason", "unreadable queue entry", "dead_ms", time.Now().UnixMilli()}})
			pipe.XAck(ctx, q.opts.Stream, q.opts.Group, m.ID)
			pipe.XDel(ctx, q.opts.Stream, m.ID)
			_, _ = pipe.Exec(ctx)
			continue
		}
		out = append(out, j)
	}
	return out, nil
}

func decodeJob(m redis.XMessage) (Job, error) {
	s, ok := m.Values["job"].(string)
	if !ok {
		return Job{}, errors.New("no job field")
	}
	var j Job
	if err := json.Unmarshal([]byte(s), &j); err != nil || j.ID == "" {
		return Job{}, errors.New("bad job")
	}
	j.handle = m.ID
	return j, nil
}

// Ack acknowledges and deletes the entry.
func (q *RedisQueue) Ack(ctx context.Context, j Job) error {
	pipe := q.rdb.TxPipeline()
	pipe.XAck(ctx, q.opts.Stream, q.opts.Group, j.handle)
	pipe.XDel(ctx, q.opts.Stream, j.handle)
	_, err := pipe.Exec(ctx)
	if err != nil {
		return redisErr(err)
	}
	return nil
}

// Retry puts the job in the retry set and acknowledges its entry, in one
// MULTI/EXEC.
func (q *RedisQueue) Retry(ctx context.Context, j Job, due time.Time, _ string) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	pipe := q.rdb.TxPipeline()
	pipe.ZAdd(ctx, q.opts.RetryKey, redis.Z{Score: float64(due.UnixMilli()), Member: string(b)})
	pipe.XAck(ctx, q.opts.Stream, q.opts.Group, j.handle)
	pipe.XDel(ctx, q.opts.Stream, j.handle)
	if _, err := pipe.Exec(ctx); err != nil {
		return redisErr(err)
	}
	return nil
}

// Dead writes the job to the dead stream and acknowledges its entry.
func (q *RedisQueue) Dead(ctx context.Context, j Job, reason string) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	pipe := q.rdb.TxPipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.opts.DeadStream, Values: []any{"job", string(b), "reason", reason, "dead_ms", time.Now().UnixMilli()}})
	if j.handle != "" {
		pipe.XAck(ctx, q.opts.Stream, q.opts.Group, j.handle)
		pipe.XDel(ctx, q.opts.Stream, j.handle)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return redisErr(err)
	}
	return nil
}

// Depth is the stream length plus the retries waiting (plus the outbox).
func (q *RedisQueue) Depth(ctx context.Context) (int64, error) {
	pipe := q.rdb.Pipeline()
	xl := pipe.XLen(ctx, q.opts.Stream)
	zc := pipe.ZCard(ctx, q.opts.RetryKey)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, redisErr(err)
	}
	n := xl.Val() + zc.Val()
	if q.outbox != nil {
		if d, err := q.outbox.PushQueueDepth(ctx); err == nil {
			n += int64(d)
		}
	}
	return n, nil
}

type deadEntry struct {
	streamID string
	job      DeadJob
	raw      string
}

// deadEntries reads up to limit dead-stream entries.
func (q *RedisQueue) deadEntries(ctx context.Context, limit int) ([]deadEntry, error) {
	msgs, err := q.rdb.XRangeN(ctx, q.opts.DeadStream, "-", "+", int64(limit)).Result()
	if err != nil {
		return nil, redisErr(err)
	}
	out := make([]deadEntry, 0, len(msgs))
	for _, m := range msgs {
		e := deadEntry{streamID: m.ID}
		e.raw, _ = m.Values["job"].(string)
		_ = json.Unmarshal([]byte(e.raw), &e.job.Job)
		e.job.Reason, _ = m.Values["reason"].(string)
		if s, ok := m.Values["dead_ms"].(string); ok {
			if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
				e.job.DeadAt = time.UnixMilli(ms)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// ListDead lists the dead stream, oldest first.
func (q *RedisQueue) ListDead(ctx context.Context, limit int) ([]DeadJob, error) {
	if limit <= 0 {
		limit = 100
	}
	es, err := q.deadEntries(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DeadJob, len(es))
	for i, e := range es {
		out[i] = e.job
	}
	return out, nil
}

// Requeue moves dead letters (by delivery id, or all) back to the stream
// with zero attempts; each move is one MULTI/EXEC.
func (q *RedisQueue) Requeue(ctx context.Context, id string) (int, error) {
	es, err := q.deadEntries(ctx, 100000)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range es {
		if e.job.ID == "" || (id != "" && e.job.ID != id) {
			continue
		}
		j := e.job.Job
		j.Attempts = 0
		b, err := json.Marshal(j)
		if err != nil {
			return n, err
		}
		pipe := q.rdb.TxPipeline()
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.opts.Stream, Values: []any{"job", string(b)}})
		pipe.XDel(ctx, q.opts.DeadStream, e.streamID)
		if _, err := pipe.Exec(ctx); err != nil {
			return n, redisErr(err)
		}
		n++
	}
	return n, nil
}

// Close closes the connection when the queue opened it.
func (q *RedisQueue) Close() error {
	var err error
	q.closeMu.Do(func() {
		if q.ownsConn {
			err = q.rdb.Close()
		}
	})
	return err
}

// configLive: jobs already in the stream or the retry set when their config
// was deleted are dropped (the delete only reaches the SQLite outbox).
// Without an outbox (a consume-only process) every job is live.
//
// Several gateways may share one stream, each with its own store: a job
// relayed by another process (or by this one before a restart) is not in
// this store and is delivered as it is.
func (q *RedisQueue) configLive(ctx context.Context, j Job) (bool, error) {
	if q.outbox == nil || j.Origin != q.origin {
		return true, nil
	}
	return configLive(ctx, q.outbox, j)
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
