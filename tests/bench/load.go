package main

import (
	"context"
	"net"
	"net/http"
	"sort"
	"sync"
	"time"
)

// result is what one scenario measured.
type result struct {
	name     string
	requests int
	errors   int
	elapsed  time.Duration
	p50, p99 time.Duration
	// extra is a free-form note (events/s, RSS, …).
	extra string
	// baseline names the same-run baseline(s) the ratio is computed against.
	ratioTo []string
}

// throughput returns successful requests per second.
func (r result) throughput() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// newClient returns a keep-alive client sized for n concurrent requests.
func newClient(n int) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        n * 2,
		MaxIdleConnsPerHost: n * 2,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// drive runs do from concurrency workers for d and collects latencies.
func drive(name string, concurrency int, d time.Duration, do func(c *http.Client, worker, i int) error) result {
	client := newClient(concurrency)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu   sync.Mutex
		lats []time.Duration
		errs int
		wg   sync.WaitGroup
	)
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			localErrs := 0
			for i := 0; ctx.Err() == nil; i++ {
				t0 := time.Now()
				if err := do(client, w, i); err != nil {
					localErrs++
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lats = append(lats, local...)
			errs += localErrs
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return result{name: name, requests: len(lats), errors: errs, elapsed: elapsed, p50: quantile(lats, 0.50), p99: quantile(lats, 0.99)}
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}
