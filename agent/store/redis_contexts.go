package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// PutContext inserts or replaces the context record: a small hash (cwd,
// backend state, times in Unix ms) under the context's own hash tag.
func (s *Redis) PutContext(ctx context.Context, c ContextRecord) error {
	if err := s.live(); err != nil {
		return err
	}
	if int64(len(c.State)) > s.maxBlob {
		return errors.New("writing context: backend state is larger than max_shared_blob_bytes")
	}
	key := s.ctxKey(c.Owner, c.ID)
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "w", c.Cwd, "c", c.CreatedAt.UnixMilli(), "u", c.UpdatedAt.UnixMilli())
		if c.State == nil {
			p.HDel(ctx, key, "st")
		} else {
			p.HSet(ctx, key, "st", c.State)
		}
		return nil
	})
	if err != nil {
		return s.opErr("writing context", err)
	}
	return nil
}

// PutContextNoWait is PutContext with a timeout of its own.
func (s *Redis) PutContextNoWait(c ContextRecord) error {
	ctx, cancel := context.WithTimeout(context.Background(), redisOpTimeout)
	defer cancel()
	return s.PutContext(ctx, c)
}

// GetContext returns the owner's context record, or ErrNotFound.
func (s *Redis) GetContext(ctx context.Context, owner, id string) (*ContextRecord, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	vals, err := s.c.HMGet(ctx, s.ctxKey(owner, id), "w", "st", "c", "u").Result()
	if err != nil {
		return nil, s.opErr("reading context", err)
	}
	cwd, ok := vals[0].(string)
	if !ok {
		return nil, ErrNotFound
	}
	c := &ContextRecord{Owner: owner, ID: id, Cwd: cwd}
	if st, ok := vals[1].(string); ok {
		c.State = []byte(st)
	}
	c.CreatedAt = msField(vals[2])
	c.UpdatedAt = msField(vals[3])
	return c, nil
}

func msField(v any) time.Time {
	str, _ := v.(string)
	ms, _ := strconv.ParseInt(str, 10, 64)
	return time.UnixMilli(ms).UTC()
}

// renewScript extends a lease that is still the caller's.
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`)

// releaseScript deletes a lease (or lock) that is still the caller's.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// newLease returns an unheld lease of the owner's context with a fresh
// random token.
func (s *Redis) newLease(owner, id string) *redisLease {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return &redisLease{s: s, key: s.leaseKey(owner, id), token: hex.EncodeToString(b[:])}
}

// TryLeaseContext takes the context's busy lease (SET NX PX with a random
// token) for ttl (SCALE-3).
func (s *Redis) TryLeaseContext(ctx context.Context, owner, id string, ttl time.Duration) (ContextLease, bool, error) {
	if err := s.live(); err != nil {
		return nil, false, err
	}
	l := s.newLease(owner, id)
	ok, err := s.c.SetNX(ctx, l.key, l.token, ttl).Result()
	if err != nil {
		return nil, false, s.opErr("leasing context", err)
	}
	if !ok {
		return nil, false, nil
	}
	return l, true, nil
}

type redisLease struct {
	s          *Redis
	key, token string
	// handedTo is the task whose final write is to release the lease
	// (redis_final_lease.go; under the store's finalMu); released says
	// that write did.
	handedTo string
	released atomic.Bool
}

// Renew extends the lease if the token is still the holder's. A lease a
// final write gave up reports true: it ended as meant, not lost.
func (l *redisLease) Renew(ctx context.Context, ttl time.Duration) (bool, error) {
	if l.released.Load() {
		return true, nil
	}
	n, err := renewScript.Run(ctx, l.s.c, []string{l.key}, l.token, ttl.Milliseconds()).Int()
	if err != nil {
		return false, l.s.opErr("renewing context lease", err)
	}
	return n == 1, nil
}

// Release deletes the lease if the token is still the holder's; nothing
// is sent when the task's final write released it.
func (l *redisLease) Release(ctx context.Context) error {
	l.s.dropFinalLease(l)
	if l.released.Load() {
		return nil
	}
	if err := releaseScript.Run(ctx, l.s.c, []string{l.key}, l.token).Err(); err != nil {
		return l.s.opErr("releasing context lease", err)
	}
	return nil
}

// createContextScript creates a context record unless it exists.
// KEYS[1] context hash; ARGV cwd, created ms, updated ms.
var createContextScript = redis.NewScript(`
if redis.call('HSETNX', KEYS[1], 'w', ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'c', ARGV[2], 'u', ARGV[3])
return 1
`)

// CreateContext creates the context record unless another instance did:
// the first creator's workspace binding wins (INPUT-1 across instances).
func (s *Redis) CreateContext(ctx context.Context, c ContextRecord) (*ContextRecord, bool, error) {
	if err := s.live(); err != nil {
		return nil, false, err
	}
	n, err := createContextScript.Run(ctx, s.c, []string{s.ctxKey(c.Owner, c.ID)}, c.Cwd, c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli()).Int()
	if err != nil {
		return nil, false, s.opErr("creating context", err)
	}
	if n == 1 {
		if c.State != nil {
			if err := s.PutContext(ctx, c); err != nil {
				return nil, false, err
			}
		}
		return &c, true, nil
	}
	got, err := s.GetContext(ctx, c.Owner, c.ID)
	if err != nil {
		return nil, false, err
	}
	return got, false, nil
}

// createLeaseScript is createContextScript and the lease's SET NX PX in
// one script (one slot: the context's hash tag). KEYS[1] context hash,
// KEYS[2] lease; ARGV cwd, created ms, updated ms, token, TTL ms. It
// returns {created, leased}.
var createLeaseScript = redis.NewScript(`
local created = 0
if redis.call('HSETNX', KEYS[1], 'w', ARGV[1]) == 1 then
  redis.call('HSET', KEYS[1], 'c', ARGV[2], 'u', ARGV[3])
  created = 1
end
local leased = 0
if redis.call('SET', KEYS[2], ARGV[4], 'NX', 'PX', ARGV[5]) then leased = 1 end
return {created, leased}
`)

// CreateAndLeaseContext implements ContextOpener: CreateContext and
// TryLeaseContext in one script (issue 32: one round trip at the start
// of a turn in a new context).
func (s *Redis) CreateAndLeaseContext(ctx context.Context, c ContextRecord, ttl time.Duration) (ContextLease, bool, bool, error) {
	if err := s.live(); err != nil {
		return nil, false, false, err
	}
	l := s.newLease(c.Owner, c.ID)
	res, err := createLeaseScript.Run(ctx, s.c, []string{s.ctxKey(c.Owner, c.ID), l.key},
		c.Cwd, c.CreatedAt.UnixMilli(), c.UpdatedAt.UnixMilli(), l.token, ttl.Milliseconds()).Int64Slice()
	if err != nil {
		return nil, false, false, s.opErr("creating and leasing context", err)
	}
	if len(res) != 2 {
		return nil, false, false, errors.New("creating and leasing context: unexpected reply")
	}
	created, leased := res[0] == 1, res[1] == 1
	if created && c.State != nil {
		if err := s.PutContext(ctx, c); err != nil {
			if leased {
				_ = l.Release(ctx)
			}
			return nil, false, false, err
		}
	}
	if !leased {
		return nil, created, false, nil
	}
	return l, created, true, nil
}
