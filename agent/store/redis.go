package store

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of RedisOptions.
const (
	// DefaultRedisKeyPrefix starts every key the Redis store writes.
	DefaultRedisKeyPrefix = "a2a:"
	// DefaultMaxSharedBlobBytes is the default cap of one artifact or
	// attachment payload kept in a shared store (SCALE-1): 8 MiB.
	DefaultMaxSharedBlobBytes = 8 << 20
	// redisOpTimeout bounds one store call that has no deadline of its own
	// (the no-wait writes).
	redisOpTimeout = 10 * time.Second
)

// RedisOptions configures OpenRedis (SCALE-1).
type RedisOptions struct {
	// URLs locate Redis. One URL: redis://[user:pass@]host:port/db,
	// rediss://… (TLS), unix:///path.sock, a Sentinel set as
	// redis+sentinel://[user:pass@]s1:26379,s2:26379/MASTER[/db] (or
	// redis://s1:26379?master_name=MASTER), or a cluster as
	// redis://host1:port?addr=host2:port. Several URLs: the seed nodes of a
	// Redis Cluster. Required.
	URLs []string
	// KeyPrefix starts every key. Default DefaultRedisKeyPrefix.
	KeyPrefix string
	// MaxSharedBlobBytes caps one stored payload (SCALE-1). Default
	// DefaultMaxSharedBlobBytes.
	MaxSharedBlobBytes int64
	// InstanceLease is the handle's heartbeat lease (SCALE-2
	// instance_lease): renewed every third of it; once it ended, another
	// instance fails the tasks this one left running. Default
	// DefaultInstanceLease.
	InstanceLease time.Duration
	// InterruptedMessage is the status message of a task failed because
	// its instance died (RPC-12). Default DefaultInterruptedMessage.
	InterruptedMessage string
	// EventLogTTL is how long a task's event log (RPC-17) stays once the
	// task reached a final state; a later resume gets the task snapshot.
	// 0: DefaultRedisEventLogTTL; negative: kept as long as the task.
	EventLogTTL time.Duration
	// NoInstance opens a handle that is not a gateway instance (a
	// command-line tool): no heartbeat lease, no running tasks recorded.
	NoInstance bool
}

// DefaultRedisEventLogTTL is how long the event log of a finished task
// stays in Redis by default.
const DefaultRedisEventLogTTL = 10 * time.Minute

// Redis is the shared Store (SCALE-1): several gateway instances on one
// Redis deployment (standalone, Sentinel or Cluster) see the same tasks,
// contexts, push configs and outbox, task event logs (RPC-17) and sent
// message ids (RPC-18), and take the same context leases.
// Every key of one task shares the hash tag {t:<id>}, every index of one
// owner {o:<owner>}, so that the scripts that must be atomic touch one
// slot. See SCHEMA.md ("Redis store") for the key layout.
type Redis struct {
	c       redis.UniversalClient
	p       string // key prefix
	maxBlob int64
	cluster bool // keys of different hash tags live in different slots
	closed  atomic.Bool
	closeMu sync.Mutex
	closed1 bool
	wg      sync.WaitGroup // no-wait writes in flight
	inst    *redisInstance // the heartbeat lease (SCALE-2)
	evTTL   time.Duration  // event log expiry after a final state (≤ 0: none)
	probe   RedisProbe     // the readiness check's client (check.go)

	deferMu sync.Mutex
	held    map[string]*heldEvents // events not yet written (redis_events.go)

	finalMu     sync.Mutex
	finalLeases map[string]*redisLease // task id → lease its final write gives up (redis_final_lease.go)
	endedMu     sync.Mutex
	ended       map[string]struct{} // tasks this handle wrote in a final state (redis_events.go)

	pruneMu    sync.Mutex
	prunedSeen string // the last entry of the pruned-tasks stream read (redis_prune.go)
}

var (
	_ Store          = (*Redis)(nil)
	_ NoWaitWriter   = (*Redis)(nil)
	_ PushStore      = (*Redis)(nil)
	_ ContextLeaser  = (*Redis)(nil)
	_ ContextCreator = (*Redis)(nil)
	_ ContextOpener  = (*Redis)(nil)
)

// OpenRedis connects to Redis and checks that it answers (PING).
func OpenRedis(ctx context.Context, o RedisOptions) (*Redis, error) {
	c, err := newRedisClient(o.URLs)
	if err != nil {
		return nil, err
	}
	if err := c.Ping(ctx).Err(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("opening redis store at %s: %w", RedisAddress(o.URLs), openErr(err))
	}
	p := o.KeyPrefix
	if p == "" {
		p = DefaultRedisKeyPrefix
	}
	maxBlob := o.MaxSharedBlobBytes
	if maxBlob <= 0 {
		maxBlob = DefaultMaxSharedBlobBytes
	}
	_, cluster := c.(*redis.ClusterClient)
	evTTL := o.EventLogTTL
	if evTTL == 0 {
		evTTL = DefaultRedisEventLogTTL
	}
	s := &Redis{c: c, p: p, maxBlob: maxBlob, cluster: cluster, evTTL: evTTL}
	if o.NoInstance {
		return s, nil
	}
	if err := s.startInstance(ctx, o.InstanceLease, o.InterruptedMessage); err != nil {
		_ = c.Close()
		return nil, err
	}
	return s, nil
}

// Client returns the underlying client (tests and diagnostics).
func (s *Redis) Client() redis.UniversalClient { return s.c }

// Close waits for queued no-wait writes and closes the connections. Later
// calls return nil; every other method returns ErrClosed afterwards.
func (s *Redis) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed1 {
		return nil
	}
	s.closed1 = true
	s.stopInstance()
	s.flushAllDeferred()
	s.closed.Store(true)
	s.wg.Wait()
	s.probe.Close()
	if err := s.c.Close(); err != nil {
		return fmt.Errorf("closing redis store: %w", err)
	}
	return nil
}

// redisErr keeps a Redis error's text but never an address or password:
// go-redis errors carry neither, dial errors carry the address, which is
// dropped.
func redisErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var re redis.Error
	if errors.As(err, &re) {
		// A server that cannot serve yet (loading its data after a
		// restart, a failover under way) is unavailable, not wrong.
		for _, p := range []string{"LOADING", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY"} {
			if strings.HasPrefix(re.Error(), p) {
				return fmt.Errorf("%w (%s)", ErrUnavailable, p)
			}
		}
		return err
	}
	return ErrUnavailable
}

// openErr is redisErr with the reason a connection failed, for the one
// start-up line (OPS-9): "redis unreachable (connect: connection refused)".
// The reason of a dial error names no address (the message names the
// URL) and never a password.
func openErr(err error) error {
	re := redisErr(err)
	if re != ErrUnavailable {
		if errors.Is(re, context.DeadlineExceeded) {
			return fmt.Errorf("%w (no answer in time)", ErrUnavailable)
		}
		return re
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return fmt.Errorf("%w (%s)", ErrUnavailable, oe.Err.Error())
	}
	return re
}

// ErrUnavailable is the error of a store operation that failed because
// the store cannot be reached (or cannot serve yet): the same operation
// may succeed later.
var ErrUnavailable = errors.New("redis unreachable")

// keyPart makes s safe inside a key: ids of the usual alphabet
// ([A-Za-z0-9._/@-]) are kept,
// anything else (separators, braces, long strings) is "~" + base64url.
func keyPart(s string) string {
	if len(s) <= 128 {
		ok := true
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/' || c == '@') {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
	}
	return "~" + b64(s)
}

// Keys. The hash tag in braces decides the cluster slot.

func (s *Redis) taskKey(id string) string      { return s.p + "{t:" + keyPart(id) + "}" }
func (s *Redis) pushCfgKey(id string) string   { return s.p + "{t:" + keyPart(id) + "}:push" }
func (s *Redis) ownerBase(owner string) string { return s.p + "{o:" + keyPart(owner) + "}:z" }
func (s *Redis) ownerIx(owner string) string   { return s.p + "{o:" + keyPart(owner) + "}:ix" }
func (s *Redis) ctxKey(owner, id string) string {
	return s.p + "{x:" + keyPart(owner) + ":" + keyPart(id) + "}"
}
func (s *Redis) leaseKey(owner, id string) string { return s.ctxKey(owner, id) + ":lease" }
func (s *Redis) pageKeyKey() string               { return s.p + "{k}:pagetoken" }

// listKey is the sorted set holding the owner's tasks that match the
// context or state filter ("" = any). With both filters it is the
// context's set, filtered by state as it is walked (listByContextState).
func (s *Redis) listKey(owner, contextID, state string) string {
	base := s.ownerBase(owner)
	switch {
	case contextID != "":
		return base + ":c:" + keyPart(contextID)
	case state != "":
		return base + ":s:" + state
	}
	return base
}

// member is a task's entry in the owner's sorted sets: all scores are 0
// and the member sorts by status time (13 zero-padded decimal digits of
// Unix ms), then id, so a lexicographic range walk is the list order.
func member(statusMS int64, id string) string {
	if statusMS < 0 {
		statusMS = 0
	}
	ts := strconv.FormatInt(statusMS, 10)
	if len(ts) < 13 {
		ts = strings.Repeat("0", 13-len(ts)) + ts
	}
	return ts + ":" + id
}

func padMS(ms int64) string {
	m := member(ms, "")
	return m[:len(m)-1]
}

// live fails once the store is closed.
func (s *Redis) live() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// opErr maps an error of a call that raced with Close to ErrClosed.
func (s *Redis) opErr(what string, err error) error {
	if s.closed.Load() || errors.Is(err, redis.ErrClosed) {
		return ErrClosed
	}
	return fmt.Errorf("%s: %w", what, redisErr(err))
}
