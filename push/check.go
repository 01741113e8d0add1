package push

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Check answers the readiness probe (OPS-8): Redis answers PING, on a
// client that neither retries nor waits out a dial backoff
// (store.RedisProbe). A failure other than ctx's is store.ErrUnavailable;
// its text may name the server's address, never its credentials, and the
// probe reports a fixed reason.
func (q *RedisQueue) Check(ctx context.Context) error {
	err := q.probe.Ping(ctx, q.rdb)
	if err == nil || ctx.Err() != nil {
		return ctx.Err()
	}
	return errors.Join(store.ErrUnavailable, err)
}
