package jws

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Defaults of RemoteJWKS.
const (
	// DefaultJWKSTTL is how long a fetched set is used before it is
	// fetched again.
	DefaultJWKSTTL = 10 * time.Minute
	// DefaultJWKSMinRefresh is the least time between two fetches.
	DefaultJWKSMinRefresh = 30 * time.Second
	// DefaultJWKSMaxStale is how long past its TTL the last good set is
	// still used while fetching fails (an outage of the key server).
	DefaultJWKSMaxStale = 24 * time.Hour
)

// errNoKeySet is returned when no key set was ever fetched and the last
// fetch left no error to report (a fetch still running when ctx ended).
var errNoKeySet = errors.New("jwks: no key set fetched yet")

// RemoteJWKS is a JWKS fetched from a URL and cached. An unknown kid or a
// stale set triggers one fetch, at most once per MinRefresh, shared by
// every caller (single flight). While a stale set is refreshed, callers
// whose kid it holds are answered from it at once; only a caller that
// needs the new keys waits, and never past the fetch timeout. When
// fetching fails, the last good set is used for MaxStale past its TTL
// (an outage of the key server), then no key is (fail closed).
type RemoteJWKS struct {
	// URL of the JWKS.
	URL string
	// TTL is how long a fetched set is used before it is fetched again.
	// Default: DefaultJWKSTTL (10m).
	TTL time.Duration
	// MinRefresh is the minimum time between two fetches (rate limit for
	// refreshes on unknown kids). Default: DefaultJWKSMinRefresh (30s).
	MinRefresh time.Duration
	// MaxStale is how long past TTL the last good set is still used while
	// fetching fails. Default: DefaultJWKSMaxStale (24h); negative: no
	// limit.
	MaxStale time.Duration
	// Fetch bounds each download.
	Fetch FetchOptions

	mu       sync.Mutex
	set      *KeySet
	fetched  time.Time
	tried    time.Time
	lastErr  error
	inflight chan struct{}
	now      func() time.Time
}

// NewRemoteJWKS returns a cached remote JWKS for u.
func NewRemoteJWKS(u string, opts FetchOptions) *RemoteJWKS {
	return &RemoteJWKS{URL: u, Fetch: opts}
}

func (r *RemoteJWKS) clock() time.Time {
	if r.now != nil {
		return r.now()
	}
	return time.Now()
}

// limits returns TTL, MinRefresh and MaxStale with their defaults.
func (r *RemoteJWKS) limits() (ttl, minRefresh, maxStale time.Duration) {
	ttl, minRefresh, maxStale = r.TTL, r.MinRefresh, r.MaxStale
	if ttl <= 0 {
		ttl = DefaultJWKSTTL
	}
	if minRefresh <= 0 {
		minRefresh = DefaultJWKSMinRefresh
	}
	if maxStale == 0 {
		maxStale = DefaultJWKSMaxStale
	}
	return ttl, minRefresh, maxStale
}

// usable reports whether the cached set may still be used at now (r.mu
// held).
func (r *RemoteJWKS) usable(now time.Time) bool {
	ttl, _, maxStale := r.limits()
	return r.set != nil && (maxStale < 0 || now.Sub(r.fetched) < ttl+maxStale)
}

// Lookup returns the keys with kid, fetching the set when it is missing,
// stale, or lacks kid (rate-limited by MinRefresh). It waits for a fetch
// only when the cached set cannot answer, and at most until ctx ends.
func (r *RemoteJWKS) Lookup(ctx context.Context, kid string) ([]Key, error) {
	ttl, minRefresh, _ := r.limits()
	r.mu.Lock()
	now := r.clock()
	if r.set != nil && now.Sub(r.fetched) < ttl {
		if keys := r.set.Lookup(kid); len(keys) > 0 {
			r.mu.Unlock()
			return keys, nil
		}
	}
	if r.inflight == nil && (r.tried.IsZero() || now.Sub(r.tried) >= minRefresh) {
		r.tried = now
		r.inflight = make(chan struct{})
		go r.refresh(context.WithoutCancel(ctx), r.inflight)
	}
	wait := r.inflight
	if r.usable(now) {
		if keys := r.set.Lookup(kid); len(keys) > 0 || wait == nil {
			r.mu.Unlock() // a stale set answers while it is refreshed
			return keys, nil
		}
	}
	r.mu.Unlock()
	if wait != nil {
		select {
		case <-wait:
		case <-ctx.Done():
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.usable(r.clock()) {
		return r.set.Lookup(kid), nil
	}
	if r.lastErr != nil {
		return nil, r.lastErr
	}
	return nil, errNoKeySet
}

// Refresh fetches the set now (as a first fetch at start-up does),
// unless a fetch is running, and waits for it; it reports the fetch's
// error.
func (r *RemoteJWKS) Refresh(ctx context.Context) error {
	r.mu.Lock()
	if r.inflight == nil {
		r.tried = r.clock()
		r.inflight = make(chan struct{})
		go r.refresh(context.WithoutCancel(ctx), r.inflight)
	}
	wait := r.inflight
	r.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}

// refresh runs one fetch (bounded by Fetch.Timeout) and closes done.
func (r *RemoteJWKS) refresh(ctx context.Context, done chan struct{}) {
	set, err := FetchJWKS(ctx, r.URL, r.Fetch)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.lastErr = err
	} else {
		r.set, r.fetched, r.lastErr = set, r.clock(), nil
	}
	r.inflight = nil
	close(done)
}
