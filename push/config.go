package push

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// Queue names: where deliveries wait (PUSH-5, PUSH-6).
const (
	// QueueLocal is the outbox table of the SQLite store (single node).
	QueueLocal = "local-file"
	// QueueRedis relays the outbox to a Redis stream read by a consumer
	// group, so several gateways share the work.
	QueueRedis = "redis-streams"
)

// Config is the push configuration of one site as the operator gives it
// (PUSH-1…PUSH-6); zero fields take their defaults.
type Config struct {
	// Queue is QueueLocal (the default) or QueueRedis.
	Queue string
	// Redis configures QueueRedis; its URL is required there.
	Redis *RedisOptions
	// AllowPrivateNetworks lists CIDRs (or IPs; items may hold several,
	// separated by spaces or commas) callbacks may reach though they are
	// not public (PUSH-2).
	AllowPrivateNetworks []string
	// Timeout bounds one delivery attempt. Default: DefaultTimeout.
	Timeout time.Duration
	// MaxAttempts is how many attempts a delivery gets before it becomes a
	// dead letter. Default: 5.
	MaxAttempts int
	// RetryInitial is the delay before the second attempt. Default: 1s.
	RetryInitial time.Duration
	// RetryMax caps a retry delay. Default: 60s.
	RetryMax time.Duration
	// RetryJitter is the relative random spread of a delay, 0 to 1.
	// Default: 0.2.
	RetryJitter float64
	// Workers is how many deliveries run at once. Default: 16.
	Workers int
	// Lease is how long a claimed local-file job stays invisible to other
	// claims. Default: 60s.
	Lease time.Duration
	// MaxConfigsPerTask caps the push configs of one task (PUSH-1).
	// Default: 10.
	MaxConfigsPerTask int
	// Sign are the keys that sign deliveries (PUSH-8), es256 or eddsa,
	// placeholders already resolved; the first signs, all are published.
	// None: deliveries are not signed.
	Sign []jws.SignKey
	// SignIssuer is the iss claim of delivery tokens: the gateway's public
	// URL. Required with Sign.
	SignIssuer string
	// SignTTL is the lifetime of a delivery token. Default and maximum:
	// MaxNotificationTTL (5m).
	SignTTL time.Duration
}

// QueueName is the queue of c, QueueLocal when unset.
func (c Config) QueueName() string {
	if c.Queue == "" {
		return QueueLocal
	}
	return c.Queue
}

// Validate checks c: zero means "the default", so counts and durations
// must not be negative; the jitter lies between 0 and 1, the first retry
// delay does not exceed the cap, the queue is known, and redis-streams
// has a URL.
func (c Config) Validate() error {
	if _, err := ParseCIDRs(c.AllowPrivateNetworks...); err != nil {
		return fmt.Errorf("push: allow_private_networks: %w", err)
	}
	if c.MaxAttempts < 0 {
		return errors.New("push: max_attempts must not be negative")
	}
	if c.Workers < 0 {
		return errors.New("push: workers must not be negative")
	}
	if c.MaxConfigsPerTask < 0 {
		return errors.New("push: max_configs_per_task must not be negative")
	}
	if err := checkSignKeys(c.Sign); err != nil {
		return err
	}
	if c.RetryJitter < 0 || c.RetryJitter > 1 {
		return errors.New("push: retry_jitter must be between 0 and 1")
	}
	if c.RetryMax > 0 && c.RetryInitial > c.RetryMax {
		return errors.New("push: retry_initial must not exceed retry_max")
	}
	switch c.QueueName() {
	case QueueLocal:
	case QueueRedis:
		if c.Redis == nil || c.Redis.URL == "" {
			return errors.New("push: queue redis-streams needs redis_url")
		}
		if c.Redis.Lease < 0 {
			return errors.New("push: lease_timeout_ms must not be negative")
		}
	default:
		return fmt.Errorf("push: unknown queue %q (want %s or %s)", c.Queue, QueueLocal, QueueRedis)
	}
	return nil
}

// Settings validates c and returns its delivery settings.
func (c Config) Settings() (Settings, error) {
	if err := c.Validate(); err != nil {
		return Settings{}, err
	}
	allow, err := ParseCIDRs(c.AllowPrivateNetworks...)
	if err != nil {
		return Settings{}, fmt.Errorf("push: allow_private_networks: %w", err)
	}
	st := Settings{
		Policy:  &Policy{Allow: allow},
		Timeout: c.Timeout,
		Retry: RetryPolicy{Initial: c.RetryInitial, Max: c.RetryMax,
			Jitter: c.RetryJitter, MaxAttempts: c.MaxAttempts},
	}
	if len(c.Sign) > 0 {
		signers, err := jws.LoadSignersFor("push sign", c.Sign, nil)
		if err != nil {
			return Settings{}, err
		}
		if st.Signer, err = NewNotificationSigner(c.SignIssuer, c.SignTTL, signers); err != nil {
			return Settings{}, err
		}
	}
	return st, nil
}

// checkSignKeys checks the push signing keys before any is loaded (PUSH-8):
// es256 or eddsa only, as receivers verify with the published public key.
func checkSignKeys(keys []jws.SignKey) error {
	for _, k := range keys {
		if strings.EqualFold(k.Alg, "hs256") {
			return fmt.Errorf("push sign %q: use es256 or eddsa (receivers verify with the published public key)", k.KID)
		}
	}
	return jws.CheckSignKeys("push sign", keys)
}
