// Package redisstream holds what the Redis stream consumers (the push
// queue's workers and the redis_rpc binding) share: the default consumer
// name, creating a consumer group, and short errors.
package redisstream

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// maxErrLen bounds the text of an error from ShortErr.
const maxErrLen = 200

// ConsumerName is the default consumer name of this process: its host
// name ("gateway" when unknown), "-" and its pid.
func ConsumerName() string {
	h, _ := os.Hostname()
	if h == "" {
		h = "gateway"
	}
	return h + "-" + strconv.Itoa(os.Getpid())
}

// EnsureGroup creates the consumer group of stream, and the stream, when
// missing; the group reads the stream from its start. A group that
// already exists is no error. The error returned is the Redis one, not
// shortened.
func EnsureGroup(ctx context.Context, rdb redis.Cmdable, stream, group string) error {
	err := rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return err
	}
	return nil
}

// ShortErr returns err's text cut to 200 bytes, as a new error (go-redis
// errors carry no secrets; the cut keeps a long one out of logs and
// replies).
func ShortErr(err error) error {
	msg := err.Error()
	if len(msg) > maxErrLen {
		msg = msg[:maxErrLen]
	}
	return errors.New(msg)
}
