package store

import (
	"context"
	"errors"
	"time"
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
	if err := s.c.Ping(ctx).Err(); err != nil {
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
