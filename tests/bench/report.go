package main

import (
	"fmt"
	"strings"
	"time"
)

// markdown renders the results as the docs/benchmarks.md report.
func (r *runner) markdown() string {
	byName := map[string]result{}
	for _, res := range r.results {
		byName[res.name] = res
	}
	var b strings.Builder
	b.WriteString("# Benchmarks\n\n")
	b.WriteString("Produced by `go run ./tests/bench` (see `make bench`). Every number comes from one run on one machine; ")
	b.WriteString("compare ratios to the same-run baselines, not absolute numbers across runs. ")
	b.WriteString("*Server CPU per request* is the user+system CPU time (from /proc/PID/stat, 10 ms ticks) that each serving process ")
	b.WriteString("spent during the run, divided by the successful requests: on a machine whose cores the load generator shares, ")
	b.WriteString("it is what bounds req/s. The bare net/http baseline runs inside the load generator and is not metered.\n\n")
	fmt.Fprintf(&b, "Machine: %s. Scenario duration %s, %d concurrent clients (ListTasks: 4).\n\n", machineFacts(r.commit), r.duration, r.concurrency)
	b.WriteString("| scenario | req/s | server CPU per request | p50 | p99 | errors | ratio to baselines | notes |\n|---|---:|---:|---:|---:|---:|---|---|\n")
	for _, res := range r.results {
		var ratios []string
		for _, base := range res.ratioTo {
			if bl, ok := byName[base]; ok && bl.throughput() > 0 {
				ratios = append(ratios, fmt.Sprintf("%.2f× %s", res.throughput()/bl.throughput(), strings.TrimPrefix(base, "baseline: ")))
			}
		}
		extra := res.extra
		if res.invalid != "" {
			extra = "INVALID: " + res.invalid + "; " + extra
		}
		fmt.Fprintf(&b, "| %s | %.0f | %s | %s | %s | %d | %s | %s |\n", res.name, res.throughput(), res.cpuPerRequest(), ms(res.p50), ms(res.p99), res.errors, strings.Join(ratios, ", "), extra)
	}
	return b.String()
}

func ms(d time.Duration) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
