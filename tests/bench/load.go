package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
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
	// invalid says why the run did not measure what its name says (its
	// answers repeated task ids: dedupe hits, not turns); "" when valid.
	invalid string
	// cpu is the CPU time the serving processes spent during the run
	// (see metered); empty when the scenario meters none.
	cpu []cpuUse
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
// do returns the id of the task its answer named ("" when the scenario
// starts no turns: baselines, reads). When answers name tasks, drive
// checks that they are distinct: a resent messageId is answered from the
// dedupe record without a turn (RPC-18), so a run whose answers repeat a
// task id measured dedupe hits and is marked invalid (main then fails). A
// scenario named with dedupeHitsPrefix measures hits on purpose: its
// answers must all name one task.
func drive(name string, concurrency int, d time.Duration, do func(c *http.Client, worker, i int) (string, error)) result {
	client := newClient(concurrency)
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var (
		mu   sync.Mutex
		lats []time.Duration
		errs int
		ids  = newTaskIDs()
		wg   sync.WaitGroup
	)
	start := time.Now()
	for w := 0; w < concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			local := make([]time.Duration, 0, 1024)
			localIDs := newTaskIDs()
			localErrs := 0
			for i := 0; ctx.Err() == nil; i++ {
				t0 := time.Now()
				id, err := do(client, w, i)
				if err != nil {
					localErrs++
					continue
				}
				local = append(local, time.Since(t0))
				localIDs.add(id)
			}
			mu.Lock()
			lats = append(lats, local...)
			errs += localErrs
			ids.merge(localIDs)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	res := result{name: name, requests: len(lats), errors: errs, elapsed: elapsed, p50: quantile(lats, 0.50), p99: quantile(lats, 0.99)}
	res.invalid = ids.check(name, len(lats))
	if res.invalid != "" {
		fmt.Fprintf(os.Stderr, "bench: INVALID SCENARIO %q: %s\n", name, res.invalid)
	}
	return res
}

// noTurns adapts the request of a scenario that starts no turns (reads,
// the card) to drive.
func noTurns(do func(c *http.Client, worker, i int) error) func(c *http.Client, worker, i int) (string, error) {
	return func(c *http.Client, worker, i int) (string, error) { return "", do(c, worker, i) }
}

// dedupeHitsPrefix starts the name of a scenario that measures dedupe
// hits on purpose (one messageId resent with the idempotent-send
// extension).
const dedupeHitsPrefix = "dedupe hits: "

// taskIDs counts the task ids a scenario's answers named.
type taskIDs struct {
	seen    map[string]int
	unnamed int // answers that named no task
}

func newTaskIDs() *taskIDs { return &taskIDs{seen: map[string]int{}} }

func (t *taskIDs) add(id string) {
	if id == "" {
		t.unnamed++
		return
	}
	t.seen[id]++
}

func (t *taskIDs) merge(o *taskIDs) {
	t.unnamed += o.unnamed
	for id, n := range o.seen {
		t.seen[id] += n
	}
}

// check returns why answers (successful requests) of scenario name did
// not measure what the name says, or "".
func (t *taskIDs) check(name string, answers int) string {
	named := answers - t.unnamed
	if named == 0 {
		return "" // a scenario that starts no turns
	}
	if strings.HasPrefix(name, dedupeHitsPrefix) {
		if len(t.seen) != 1 {
			return fmt.Sprintf("%d answers named %d tasks: turns ran, these were not dedupe hits", named, len(t.seen))
		}
		return ""
	}
	if t.unnamed > 0 {
		return fmt.Sprintf("%d of %d answers named no task", t.unnamed, answers)
	}
	if len(t.seen) != named {
		return fmt.Sprintf("%d answers named only %d distinct tasks: it measured dedupe hits, not turns (a fresh messageId per request is required)", named, len(t.seen))
	}
	return ""
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q * float64(len(sorted)-1))
	return sorted[i]
}
