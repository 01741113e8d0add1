package jws

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// RemoteJWKS (AUTH-7): concurrent lookups of an unknown kid share one
// fetch; a stale set answers known kids at once while it is refreshed;
// during an outage the last set serves for MaxStale past its TTL, then no
// key does (fail closed) until a fetch succeeds again.
func TestRemoteJWKSRefreshAndOutage(t *testing.T) {
	k := newTestKeys(t)
	jwks, _ := PublicJWKS([]*Signer{k.es})
	var hits atomic.Int32
	var down atomic.Bool
	var delay atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if d := time.Duration(delay.Load()); d > 0 {
			select {
			case <-time.After(d):
			case <-release:
			}
		}
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write(jwks)
	}))
	defer srv.Close()
	defer close(release)
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	r := &RemoteJWKS{URL: srv.URL, TTL: time.Minute, MinRefresh: 10 * time.Second, MaxStale: time.Hour, Fetch: FetchOptions{Timeout: 5 * time.Second}, now: clock}

	// Single flight: 20 concurrent first lookups, one fetch.
	delay.Store(int64(200 * time.Millisecond))
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if keys, err := r.Lookup(t.Context(), "es-1"); len(keys) != 1 || err != nil {
				t.Errorf("first lookup: %d keys, %v", len(keys), err)
			}
		})
	}
	wg.Wait()
	if hits.Load() != 1 {
		t.Fatalf("20 concurrent lookups made %d fetches, want 1", hits.Load())
	}

	// Stale: a known kid is answered at once while the slow refresh runs.
	advance(2 * time.Minute)
	delay.Store(int64(3 * time.Second))
	start := time.Now()
	if keys, _ := r.Lookup(t.Context(), "es-1"); len(keys) != 1 {
		t.Fatal("stale set did not answer")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("a known kid waited %v for the refresh of a stale set", d)
	}
	waitFor(t, func() bool { return hits.Load() == 2 })
	release <- struct{}{} // let the slow refresh finish
	delay.Store(0)
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.inflight == nil })

	// Outage: within MaxStale past the TTL the set serves, after it not.
	down.Store(true)
	advance(30 * time.Minute)
	if keys, _ := r.Lookup(t.Context(), "es-1"); len(keys) != 1 {
		t.Fatal("the cached set did not serve within MaxStale")
	}
	waitFor(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.inflight == nil })
	advance(2 * time.Hour)
	if keys, err := r.Lookup(t.Context(), "es-1"); len(keys) != 0 || err == nil {
		t.Fatalf("a set past MaxStale still served: %d keys, %v", len(keys), err)
	}
	// Back: the next fetch allowed by MinRefresh restores it.
	down.Store(false)
	advance(11 * time.Second)
	if keys, err := r.Lookup(t.Context(), "es-1"); len(keys) != 1 || err != nil {
		t.Fatalf("after the outage: %d keys, %v", len(keys), err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached")
}
