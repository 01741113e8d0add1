package push

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

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
		return redisstream.ShortErr(err)
	}
	return nil
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
		return nil, redisstream.ShortErr(err)
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
			return n, redisstream.ShortErr(err)
		}
		n++
	}
	return n, nil
}
