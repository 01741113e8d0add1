package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// idleContexts opens many contexts (one short turn each) and reports the
// gateway's resident memory per context once they sit idle, and its live
// heap per context after a collection (RSS also holds the garbage of the
// 20,000 requests that Go has not handed back to the OS yet).
func (r *runner) idleContexts(g *gateway) []result {
	const n = 20000
	runtime.GC()
	heapBefore, _ := r.liveMemory()
	before := g.rssBytes()
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := 0
	c := newClient(r.concurrency)
	for w := 0; w < r.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < n; i += r.concurrency {
				body := rpcBody("SendMessage", sendParams("hi", fmt.Sprintf("idle-ctx-%d", i)))
				if err := expect(c, r.fast+"/", benchToken, body, "INPUT_REQUIRED"); err != nil {
					mu.Lock()
					errs++
					mu.Unlock()
				}
			}
		}(w)
	}
	wg.Wait()
	time.Sleep(2 * time.Second) // sleep: a benchmark lets the gateway settle before measuring RSS
	after := g.rssBytes()
	heapAfter, _ := r.liveMemory()
	per := float64(after-before) / float64(n)
	return []result{{name: fmt.Sprintf("idle contexts (%d)", n), requests: n - errs, errors: errs, elapsed: time.Since(start),
		extra: fmt.Sprintf("RSS %+.1f MiB, %.0f B/context (RSS, includes store cache); after a GC: live heap %+.1f MiB, %.0f B/context",
			float64(after-before)/(1<<20), per, (float64(heapAfter)-float64(heapBefore))/(1<<20), (float64(heapAfter)-float64(heapBefore))/float64(n))}}
}

// idleStreamsScenario holds many SSE streams open on long turns and
// reports the gateway's resident memory.
func (r *runner) idleStreamsScenario(g *gateway) []result {
	n := r.idleStreams
	before := g.rssBytes()
	start := time.Now()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	addr := strings.TrimPrefix(r.slow, "http://")
	errs := 0
	for i := 0; i < n; i++ {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			errs++
			continue
		}
		body := rpcBody("SendStreamingMessage", sendParams("wait", "")) // a messageId each (RPC-18)
		req := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", addr, benchToken, len(body), body)
		if _, err := c.Write([]byte(req)); err != nil {
			c.Close()
			errs++
			continue
		}
		conns = append(conns, c)
	}
	// Read the first bytes of each stream so we know it is open.
	buf := make([]byte, 512)
	open := 0
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if n, err := c.Read(buf); err == nil && bytes.Contains(buf[:n], []byte("text/event-stream")) {
			open++
		}
	}
	time.Sleep(time.Second) // sleep: a benchmark lets the gateway settle before measuring RSS
	after := g.rssBytes()
	r.saveProfiles("idle-streams", "pprof/heap", "pprof/goroutine", "vars")
	goroutines := r.goroutines()
	// Only now (RSS read, streams still open): what of it is live heap
	// and what goroutine stacks, after a collection.
	heap, stacks := r.liveMemory()
	r.saveProfiles("idle-streams-gc", "pprof/heap", "pprof/goroutine?debug=1")
	per := float64(max(open, 1))
	return []result{{name: fmt.Sprintf("idle SSE streams (%d on running turns)", n), requests: open, errors: errs + len(conns) - open, elapsed: time.Since(start),
		extra: fmt.Sprintf("gateway RSS %.0f MiB (+%.0f MiB, %.1f KiB/stream incl. its turn), %d goroutines (%.2f/stream); after a GC: live heap %.0f MiB (%.1f KiB/stream), stacks %.0f MiB (%.1f KiB/stream), both incl. the gateway's own",
			float64(after)/(1<<20), float64(after-before)/(1<<20), float64(after-before)/1024/per, goroutines, float64(goroutines)/per,
			float64(heap)/(1<<20), float64(heap)/1024/per, float64(stacks)/(1<<20), float64(stacks)/1024/per)}}
}

// liveMemory forces a collection in the gateway (the heap profile's gc=1)
// and returns its live heap and goroutine stack bytes from expvar's
// memstats (0, 0 when unavailable).
func (r *runner) liveMemory() (heap, stacks uint64) {
	if resp, err := http.Get(r.admin + "/debug/pprof/heap?gc=1"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	resp, err := http.Get(r.admin + "/debug/vars")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var v struct {
		Memstats struct{ HeapAlloc, StackInuse uint64 } `json:"memstats"`
	}
	if json.NewDecoder(resp.Body).Decode(&v) != nil {
		return 0, 0
	}
	return v.Memstats.HeapAlloc, v.Memstats.StackInuse
}

// saveProfiles writes the gateway's named debug pages (pprof profiles and
// expvar "vars", from the admin endpoint) to $BENCH_PROFILE_DIR as
// <prefix>-<name>; nothing when the variable is unset.
func (r *runner) saveProfiles(prefix string, names ...string) {
	dir := os.Getenv("BENCH_PROFILE_DIR")
	if dir == "" {
		return
	}
	for _, name := range names {
		resp, err := http.Get(r.admin + "/debug/" + name)
		if err != nil {
			continue
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK {
			_ = os.WriteFile(filepath.Join(dir, prefix+"-"+strings.NewReplacer("/", "-", "?", "-", "=", "-").Replace(name)), b, 0o644)
		}
	}
}

// goroutines reads the gateway's goroutine count from the admin pprof
// endpoint (0 when unavailable).
func (r *runner) goroutines() int {
	resp, err := http.Get(r.admin + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var n int
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	_, _ = fmt.Sscanf(line, "goroutine profile: total %d", &n)
	return n
}
