package push

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

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
		return 0, fmt.Errorf("adding to the push stream: %w", redisstream.ShortErr(err))
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
		return 0, redisstream.ShortErr(err)
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
			return redisstream.ShortErr(err)
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
