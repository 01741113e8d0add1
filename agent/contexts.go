package agent

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// ctxKey identifies a conversation context: ids are scoped to their owner.
type ctxKey struct {
	owner, id string
}

// convContext is the in-memory side of a conversation context: the busy
// lease that serialises its turns, the workspace it is bound to and the
// backend session. It is evicted when idle; its tasks stay stored.
type convContext struct {
	key      ctxKey
	cwd      string
	busy     chan struct{} // holds one token while a turn runs
	lastUsed atomic.Int64  // unix nanoseconds
	session  backend.Session
	backend  backend.Backend
	// ready is closed once cwd holds the workspace the context is bound to
	// (read from the store, or stored by the creator).
	ready chan struct{}
	// fresh is set while session.State is as just read from the store (a
	// shared lease need not reload it: context_lease.go).
	fresh atomic.Bool
	// pending is the record of a context minted for its turn, not stored
	// yet: the turn's shared lease stores it (store.ContextOpener). Set
	// before ready is closed; then read and cleared by the holder of busy.
	pending *store.ContextRecord
}

// acquire takes the context's busy lease, waiting up to wait.
func (c *convContext) acquire(ctx context.Context, wait time.Duration) bool {
	select {
	case c.busy <- struct{}{}:
		return true
	default:
	}
	if wait <= 0 {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case c.busy <- struct{}{}:
		return true
	case <-t.C:
		return false
	case <-ctx.Done():
		return false
	}
}

func (c *convContext) release() {
	c.lastUsed.Store(time.Now().UnixNano())
	<-c.busy
}

// contextTable holds the live contexts and evicts idle ones.
type contextTable struct {
	mu sync.Mutex
	m  map[ctxKey]*convContext
}

func newContextTable() *contextTable {
	return &contextTable{m: map[ctxKey]*convContext{}}
}

// get returns the live context for key, creating it with create when absent.
// created reports whether this call made it.
func (t *contextTable) get(key ctxKey, create func() *convContext) (c *convContext, created bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c = t.m[key]; c != nil {
		c.lastUsed.Store(time.Now().UnixNano())
		return c, false
	}
	c = create()
	c.key = key
	c.busy = make(chan struct{}, 1)
	c.lastUsed.Store(time.Now().UnixNano())
	t.m[key] = c
	return c, true
}

func (t *contextTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// evictIdle drops contexts idle since before cutoff and not running a turn,
// closing their backend sessions. It returns how many it evicted.
func (t *contextTable) evictIdle(cutoff time.Time) int {
	var evicted []*convContext
	t.mu.Lock()
	for k, c := range t.m {
		if c.lastUsed.Load() < cutoff.UnixNano() && len(c.busy) == 0 {
			delete(t.m, k)
			evicted = append(evicted, c)
		}
	}
	t.mu.Unlock()
	for _, c := range evicted {
		if sc, ok := c.backend.(backend.SessionCloser); ok {
			sc.CloseSession(&c.session)
		}
	}
	return len(evicted)
}

// peek returns the live context for key without creating it.
func (t *contextTable) peek(key ctxKey) (*convContext, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c, ok := t.m[key]
	return c, ok
}
