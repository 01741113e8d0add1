package push

import (
	"cmp"
	"errors"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
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
	o.Stream = cmp.Or(o.Stream, DefaultStream)
	o.RetryKey = cmp.Or(o.RetryKey, DefaultRetryKey)
	o.DeadStream = cmp.Or(o.DeadStream, DefaultDeadStream)
	o.Group = cmp.Or(o.Group, DefaultConsumerGroup)
	if o.Consumer == "" {
		o.Consumer = redisstream.ConsumerName()
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
