package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

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
			return nil, redisstream.ShortErr(err)
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
		return redisstream.ShortErr(err)
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
		return redisstream.ShortErr(err)
	}
	return nil
}

// Depth is the stream length plus the retries waiting (plus the outbox).
func (q *RedisQueue) Depth(ctx context.Context) (int64, error) {
	pipe := q.rdb.Pipeline()
	xl := pipe.XLen(ctx, q.opts.Stream)
	zc := pipe.ZCard(ctx, q.opts.RetryKey)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, redisstream.ShortErr(err)
	}
	n := xl.Val() + zc.Val()
	if q.outbox != nil {
		if d, err := q.outbox.PushQueueDepth(ctx); err == nil {
			n += int64(d)
		}
	}
	return n, nil
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
