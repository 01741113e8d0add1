package push

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Check answers the readiness probe (OPS-8): Redis answers PING on the
// queue's connection. Its error may name the server's address, never its
// credentials; the probe reports a fixed reason. A failure other than
// ctx's is store.ErrUnavailable.
func (q *RedisQueue) Check(ctx context.Context) error {
	err := q.rdb.Ping(ctx).Err()
	if err == nil || ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(store.ErrUnavailable, err)
}
