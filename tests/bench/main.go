// Command bench is the load harness of caddy-a2a: it builds the gateway,
// starts it over loopback and drives it with scenarios, each measured next
// to two baselines run in the same process on the same machine: a Caddy
// `respond` route in the same binary, and a bare net/http handler that
// decodes a SendMessage and encodes a Task. It prints a table and writes it,
// with the machine facts, to docs/benchmarks.md.
//
//	go run ./tests/bench -duration 5s -concurrency 32
//
// Numbers are only comparable within one run: report ratios to the baselines.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func main() {
	var (
		duration    = flag.Duration("duration", 5*time.Second, "how long each scenario runs")
		concurrency = flag.Int("concurrency", 32, "concurrent clients per scenario")
		out         = flag.String("out", "docs/benchmarks.md", "markdown report to write (empty: none)")
		only        = flag.String("only", "", "comma-separated scenario names to run (default: all)")
		listSizes   = flag.String("list-sizes", "1000,100000", "stored task counts for the ListTasks scenario (1000000 takes minutes to load)")
		idleStreams = flag.Int("idle-streams", 10000, "idle SSE streams for the idle-streams scenario")
	)
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	r := &runner{root: root, duration: *duration, concurrency: *concurrency, only: splitList(*only),
		listSizes: parseSizes(*listSizes), idleStreams: *idleStreams}
	if err := r.run(); err != nil {
		fail(err)
	}
	report := r.markdown()
	fmt.Print(report)
	if bad := r.invalid(); len(bad) > 0 {
		// Not written to -out: a scenario that measured dedupe hits where
		// it names turns would publish wrong numbers.
		fail(fmt.Errorf("%d scenario(s) did not measure what they name (report not written):\n  %s", len(bad), strings.Join(bad, "\n  ")))
	}
	if *out != "" {
		path := *out
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			fail(err)
		}
		if err := os.WriteFile(path, []byte(report), 0o644); err != nil {
			fail(err)
		}
		fmt.Fprintln(os.Stderr, "wrote", path)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func splitList(s string) map[string]bool {
	m := map[string]bool{}
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			m[p] = true
		}
	}
	return m
}

func parseSizes(s string) []int {
	var out []int
	for _, p := range strings.Split(s, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(p), &n); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

func machineFacts(commit string) string {
	return fmt.Sprintf("CPUs: %d, GOMAXPROCS: %d, Go: %s, OS/arch: %s/%s, commit: %s, date: %s",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.Version(), runtime.GOOS, runtime.GOARCH, commit,
		time.Now().UTC().Format(time.RFC3339))
}
