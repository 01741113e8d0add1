package store

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Readiness parts of a store (OPS-8): a load balancer's readiness probe
// asks them whether this instance can serve now. They never return an
// error text with a URL, a password or a local path: the probe's answer
// is public.

// Checker says whether an open store can serve now (OPS-8).
type Checker interface {
	// Check returns nil when the store answers within ctx: SQLite's
	// writer runs an empty transaction, Redis answers PING. Its error
	// is one of ErrClosed, ErrUnavailable (wrapped), ErrWriterStopped or
	// ctx's error.
	Check(ctx context.Context) error
}

// LeaseChecker says whether this instance's heartbeat lease (SCALE-2) is
// current: while it is, no other instance fails its running tasks.
type LeaseChecker interface {
	// CheckLease returns nil when the lease was renewed less than a lease
	// ago (as of now), else ErrLeaseExpired. It costs no round trip.
	CheckLease(now time.Time) error
}

// ErrWriterStopped is the Check error of a SQLite store whose writer
// goroutine has returned.
var ErrWriterStopped = errors.New("the store's writer stopped")

// ErrLeaseExpired is the CheckLease error of an instance whose lease was
// not renewed for a lease or longer: other instances may fail its tasks.
var ErrLeaseExpired = errors.New("instance lease expired")

// Check implements Checker: the writer commits an empty transaction, so
// the database is open and writable and the writer goroutine answers.
func (s *SQLite) Check(ctx context.Context) error {
	select {
	case <-s.stopped:
		if s.closed.Load() {
			return ErrClosed
		}
		return ErrWriterStopped
	default:
	}
	r := getReq(ctx, opFunc)
	r.noTasks = true
	r.fn = func(*writer, int64) (int, error) { return 0, nil }
	_, err := s.submit(ctx, r)
	return err
}

// Check implements Checker: Redis answers PING.
func (s *Redis) Check(ctx context.Context) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := s.probe.Ping(ctx, s.c); err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return s.opErr("ping", errors.Join(ErrUnavailable, redisErr(err)))
	}
	return nil
}

// CheckLease implements LeaseChecker from the time of the last renewal
// that Redis acknowledged.
func (s *Redis) CheckLease(now time.Time) error {
	if s.inst == nil {
		return nil
	}
	if err := s.live(); err != nil {
		return err
	}
	last := s.inst.renewed.Load()
	if last == 0 || now.Sub(time.UnixMilli(last)) >= s.inst.lease {
		return ErrLeaseExpired
	}
	return nil
}

// Err returns, without waiting, ErrNotOpen before Open, the reason d
// failed, ErrClosed once closed, else nil (open).
func (d *Deferred) Err() error {
	select {
	case <-d.ready:
	default:
		return ErrNotOpen
	}
	if d.caps == nil {
		return d.err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return ErrClosed
	}
	return nil
}

// Check says whether d is open (Err) and its store answers (its Checker;
// an open store without one is taken as ready).
func (d *Deferred) Check(ctx context.Context) error {
	if err := d.Err(); err != nil {
		return err
	}
	if c := d.caps.Checker; c != nil {
		return c.Check(ctx)
	}
	return nil
}

// ProbeClient returns a client on c's servers for readiness checks (OPS-8):
// one connection, no command retry and one dial attempt, so that a server
// that refuses connections fails the check at once, not after the retry
// and dial backoff of c. For a client of another type it returns c itself
// (closeIt false).
func ProbeClient(c redis.UniversalClient) (probe redis.UniversalClient, closeIt bool) {
	switch cc := c.(type) {
	case *redis.Client:
		o := *cc.Options()
		o.MaxRetries, o.DialerRetries, o.PoolSize, o.MinIdleConns, o.MaxIdleConns = -1, 1, 1, 0, 1
		return redis.NewClient(&o), true
	case *redis.ClusterClient:
		o := *cc.Options()
		o.MaxRetries, o.DialerRetries, o.PoolSize, o.MinIdleConns, o.MaxIdleConns = -1, 1, 1, 0, 1
		return redis.NewClusterClient(&o), true
	}
	return c, false
}

// RedisProbe pings for readiness checks (OPS-8) on a ProbeClient of a
// handle's client, made at the first Ping and dropped after a failure, so
// that the next Ping dials afresh (a pool that saw dial errors waits
// before dialing again). The zero value is ready to use.
type RedisProbe struct {
	mu      sync.Mutex
	c       redis.UniversalClient
	closeIt bool
	closed  bool
}

// Ping sends PING to the servers of c on the probe client; after Close
// it returns ErrClosed.
func (p *RedisProbe) Ping(ctx context.Context, c redis.UniversalClient) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return ErrClosed
	}
	if p.c == nil {
		p.c, p.closeIt = ProbeClient(c)
	}
	pc, closeIt := p.c, p.closeIt
	p.mu.Unlock()
	err := pc.Ping(ctx).Err()
	if err != nil && closeIt {
		p.mu.Lock()
		if p.c == pc {
			p.c = nil
			_ = pc.Close()
		}
		p.mu.Unlock()
	}
	return err
}

// Close closes the probe client; later Pings return ErrClosed.
func (p *RedisProbe) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.c != nil && p.closeIt {
		_ = p.c.Close()
	}
	p.c = nil
}
