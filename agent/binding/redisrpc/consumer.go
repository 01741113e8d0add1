package redisrpc

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

// Authenticator checks the credentials of a request's headers
// (headers.authorization, or the API key header) with the site's rules
// and returns the principal. A nil Authenticator means auth is off: every
// request runs without a principal.
type Authenticator interface {
	AuthenticateHeaders(ctx context.Context, headers map[string]string) (principal string, ok bool)
}

// IdentityAuthenticator is an Authenticator that also returns the
// credential's scopes and claims (AUTH-8), which limits selectors and
// skills' requires_scopes check; the consumer uses it when its
// Authenticator implements it.
type IdentityAuthenticator interface {
	IdentifyHeaders(ctx context.Context, headers map[string]string) (principal string, id *agent.Identity, ok bool)
}

// identify checks headers with the consumer's Authenticator.
func (c *Consumer) identify(ctx context.Context, headers map[string]string) (string, *agent.Identity, bool) {
	if ia, ok := c.authn.(IdentityAuthenticator); ok {
		return ia.IdentifyHeaders(ctx, headers)
	}
	p, ok := c.authn.AuthenticateHeaders(ctx, headers)
	return p, nil, ok
}

// Stats count what a consumer did since it started.
type Stats struct {
	// Served is the requests answered (their last response written and
	// the entry acknowledged).
	Served int64
	// Refused is the entries acknowledged without any answer: no usable
	// correlation_id or a reply_stream outside the prefix.
	Refused int64
	// Reclaimed is the entries taken over from idle consumers (XAUTOCLAIM).
	Reclaimed int64
	// Abandoned is the requests left pending at a stop (not acknowledged,
	// for another consumer to re-claim).
	Abandoned int64
	// GaveUp is the re-claimed requests answered with an error instead of
	// run again, after MaxDeliveries deliveries.
	GaveUp int64
}

// Consumer reads the request stream as one member of the consumer group
// and serves each entry through a jsonrpc.Dispatcher.
type Consumer struct {
	rdb    redis.UniversalClient
	d      *jsonrpc.Dispatcher
	opts   Options
	authn  Authenticator
	logger *zap.Logger

	slots chan struct{} // one token per request in flight

	mu       sync.Mutex
	inflight map[string]bool // entry ids being served
	started  bool
	stopped  bool

	readCancel    context.CancelFunc // stops the read loop
	refreshCancel context.CancelFunc // stops the lease refresher
	readDone      chan struct{}
	refreshDone   chan struct{}
	serveCtx      context.Context // canceled when in-flight requests are abandoned
	serveCancel   context.CancelFunc
	handlers      sync.WaitGroup

	claimCursor string
	nextClaim   time.Time

	served, refused, reclaimed, abandoned, gaveUp atomic.Int64
}

// New returns a consumer of opts.RequestStream over rdb serving through d
// (its calls labelled agent.BindingRedis). authn checks the
// headers of every request; nil turns auth off. The caller owns rdb.
func New(rdb redis.UniversalClient, d *jsonrpc.Dispatcher, opts Options, authn Authenticator, logger *zap.Logger) *Consumer {
	if logger == nil {
		logger = zap.NewNop()
	}
	opts = opts.WithDefaults()
	return &Consumer{
		rdb: rdb, d: d, opts: opts, authn: authn, logger: logger,
		slots: make(chan struct{}, opts.MaxInFlight), inflight: map[string]bool{},
		claimCursor: "0-0",
	}
}

// Options returns the effective options.
func (c *Consumer) Options() Options { return c.opts }

// Stats returns the counters.
func (c *Consumer) Stats() Stats {
	return Stats{Served: c.served.Load(), Refused: c.refused.Load(), Reclaimed: c.reclaimed.Load(), Abandoned: c.abandoned.Load(), GaveUp: c.gaveUp.Load()}
}

// Start creates the consumer group (and the stream) when missing and
// starts reading. ctx bounds only the group creation.
func (c *Consumer) Start(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("redis_rpc: consumer already started")
	}
	if err := c.ensureGroup(ctx); err != nil {
		return err
	}
	c.started = true
	readCtx, readCancel := context.WithCancel(context.Background())
	refreshCtx, refreshCancel := context.WithCancel(context.Background())
	c.readCancel, c.refreshCancel = readCancel, refreshCancel
	c.serveCtx, c.serveCancel = context.WithCancel(context.Background())
	c.readDone, c.refreshDone = make(chan struct{}), make(chan struct{})
	go c.readLoop(readCtx)
	go c.refreshLoop(refreshCtx)
	return nil
}

// Stop stops reading at once (within one Block), lets the requests in
// flight finish for up to grace — their leases still refreshed — then
// abandons the rest: their contexts are canceled, nothing more is written
// for them and they stay pending (unacknowledged) for another consumer, or
// this one's successor after a reload, to re-claim after ClaimAfter. It
// returns when every goroutine of the consumer has ended. Stop is
// idempotent.
func (c *Consumer) Stop(grace time.Duration) {
	c.mu.Lock()
	if !c.started || c.stopped {
		c.mu.Unlock()
		return
	}
	c.stopped = true
	c.mu.Unlock()
	c.readCancel()
	<-c.readDone // no handler starts after this
	t := time.NewTimer(grace)
	defer t.Stop()
	idle := c.waitHandlers()
	select {
	case <-idle:
	case <-t.C:
		c.serveCancel()
		<-idle
	}
	c.refreshCancel()
	<-c.refreshDone
	c.serveCancel()
}

// waitHandlers returns a channel closed when no handler runs.
func (c *Consumer) waitHandlers() <-chan struct{} {
	ch := make(chan struct{})
	go func() { c.handlers.Wait(); close(ch) }()
	return ch
}

// ensureGroup creates the consumer group (and the request stream) when
// missing.
func (c *Consumer) ensureGroup(ctx context.Context) error {
	if err := redisstream.EnsureGroup(ctx, c.rdb, c.opts.RequestStream, c.opts.Group); err != nil {
		return fmt.Errorf("redis_rpc: creating the consumer group: %w", redisstream.ShortErr(err))
	}
	return nil
}

// readLoop takes free slots, reads (re-claimed entries first, then new
// ones) at most that many entries and serves each in its own goroutine.
func (c *Consumer) readLoop(ctx context.Context) {
	defer close(c.readDone)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		n := c.acquire(ctx)
		if n == 0 {
			return
		}
		msgs, reclaimed, err := c.next(ctx, n)
		if ctx.Err() != nil {
			c.release(n)
			return
		}
		if err != nil {
			c.release(n)
			c.logger.Warn("redis_rpc: reading the request stream failed", zap.Error(err))
			sleep(ctx, backoff)
			backoff = min(2*backoff, 5*time.Second)
			continue
		}
		backoff = 100 * time.Millisecond
		used := 0
		for _, m := range msgs {
			if !c.begin(m.ID) {
				continue // already being served here
			}
			used++
			if reclaimed {
				c.reclaimed.Add(1)
			}
			c.handlers.Add(1)
			go c.serve(m, reclaimed)
		}
		c.release(n - used)
	}
}

// acquire blocks for one free slot, then takes up to Batch in all without
// blocking; 0 when ctx ended first.
func (c *Consumer) acquire(ctx context.Context) int {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return 0
	}
	n := 1
	for n < c.opts.Batch {
		select {
		case c.slots <- struct{}{}:
			n++
			continue
		default:
		}
		break
	}
	return n
}

// release frees n slots.
func (c *Consumer) release(n int) {
	for range n {
		<-c.slots
	}
}

// begin marks an entry in flight; false when it already is.
func (c *Consumer) begin(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight[id] {
		return false
	}
	c.inflight[id] = true
	return true
}

// end unmarks an entry and frees its slot.
func (c *Consumer) end(id string) {
	c.mu.Lock()
	delete(c.inflight, id)
	c.mu.Unlock()
	c.release(1)
}

// claimInterval is how often idle pending entries are looked for.
func (c *Consumer) claimInterval() time.Duration {
	return min(c.opts.ClaimAfter/2, 5*time.Second)
}

// next returns up to n entries: pending entries idle past ClaimAfter
// (XAUTOCLAIM, at most every claimInterval) or else new ones
// (XREADGROUP, blocking at most Block).
func (c *Consumer) next(ctx context.Context, n int) ([]redis.XMessage, bool, error) {
	if now := time.Now(); !now.Before(c.nextClaim) {
		msgs, cursor, err := c.rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: c.opts.RequestStream, Group: c.opts.Group, MinIdle: c.opts.ClaimAfter,
			Start: c.claimCursor, Count: int64(n), Consumer: c.opts.Consumer,
		}).Result()
		switch {
		case err != nil && strings.Contains(err.Error(), "NOGROUP"):
			return nil, false, c.ensureGroup(ctx)
		case err != nil:
			return nil, false, redisstream.ShortErr(err)
		}
		if cursor == "0-0" || cursor == "" {
			// A full pass is done: the next one starts over later.
			c.claimCursor = "0-0"
			c.nextClaim = now.Add(c.claimInterval())
		} else {
			c.claimCursor = cursor
		}
		if len(msgs) > 0 {
			return msgs, true, nil
		}
	}
	res, err := c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: c.opts.Group, Consumer: c.opts.Consumer, Streams: []string{c.opts.RequestStream, ">"},
		Count: int64(n), Block: c.opts.Block,
	}).Result()
	if err != nil {
		if errors.Is(err, redis.Nil) {
			return nil, false, nil
		}
		if strings.Contains(err.Error(), "NOGROUP") {
			return nil, false, c.ensureGroup(ctx)
		}
		return nil, false, redisstream.ShortErr(err)
	}
	var msgs []redis.XMessage
	for _, s := range res {
		msgs = append(msgs, s.Messages...)
	}
	return msgs, false, nil
}

// refreshLoop keeps the lease of the entries in flight here: every third
// of ClaimAfter it resets their idle time (XCLAIM … JUSTID to this same
// consumer), so a turn longer than ClaimAfter is not re-claimed by another
// consumer while it still runs. Only entries still owned here are
// touched (XPENDING first).
func (c *Consumer) refreshLoop(ctx context.Context) {
	defer close(c.refreshDone)
	t := time.NewTicker(max(c.opts.ClaimAfter/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.refresh(ctx)
	}
}

// refresh resets the idle time of the in-flight entries this consumer
// still owns: one XPENDING per entry (pipelined) tells which, then one
// XCLAIM … JUSTID takes those.
func (c *Consumer) refresh(ctx context.Context) {
	c.mu.Lock()
	ids := make([]string, 0, len(c.inflight))
	for id := range c.inflight {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	if len(ids) == 0 {
		return
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XPendingExtCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.XPendingExt(rctx, &redis.XPendingExtArgs{
			Stream: c.opts.RequestStream, Group: c.opts.Group, Start: id, End: id, Count: 1, Consumer: c.opts.Consumer,
		})
	}
	if _, err := pipe.Exec(rctx); err != nil {
		c.logger.Warn("redis_rpc: refreshing leases failed", zap.Error(redisstream.ShortErr(err)))
		return
	}
	var mine []string
	for i, cmd := range cmds {
		if p := cmd.Val(); len(p) == 1 && p[0].ID == ids[i] {
			mine = append(mine, ids[i])
		}
	}
	if len(mine) == 0 {
		return
	}
	if err := c.rdb.XClaimJustID(rctx, &redis.XClaimArgs{
		Stream: c.opts.RequestStream, Group: c.opts.Group, Consumer: c.opts.Consumer, MinIdle: 0, Messages: mine,
	}).Err(); err != nil {
		c.logger.Warn("redis_rpc: refreshing leases failed", zap.Error(redisstream.ShortErr(err)))
	}
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
