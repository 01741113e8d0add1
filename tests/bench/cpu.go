package main

import (
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// proc is a process whose CPU time a scenario reads: the server that
// answers the scenario's requests (a gateway, redis-server, the JS SDK
// server), named for the report.
type proc struct {
	name string
	pid  string // a /proc entry: a number, or "self"
}

// procOf names a started process.
func procOf(name string, pid int) proc { return proc{name: name, pid: strconv.Itoa(pid)} }

// cpuUse is the CPU time one process spent during a scenario.
type cpuUse struct {
	name    string
	seconds float64
}

// cpuSeconds is the user+system CPU time of process pid (0 if unknown).
func cpuSeconds(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100 // USER_HZ
}

// metered runs run and records the CPU time each of procs spent while it
// ran (in the result's cpu), so the report can give the server's CPU per
// request next to req/s: on a machine whose cores the load generator
// shares, CPU per request is what bounds throughput.
func metered(procs []proc, run func() result) result {
	before := make([]float64, len(procs))
	for i, p := range procs {
		before[i] = cpuSeconds(p.pid)
	}
	res := run()
	for i, p := range procs {
		res.cpu = append(res.cpu, cpuUse{name: p.name, seconds: cpuSeconds(p.pid) - before[i]})
	}
	return res
}

// cpuPerRequest renders the CPU per successful request of each metered
// process ("312 µs gateway + 180 µs redis"); "–" when nothing was metered.
func (r result) cpuPerRequest() string {
	if len(r.cpu) == 0 || r.requests == 0 {
		return "–"
	}
	parts := make([]string, 0, len(r.cpu))
	for _, c := range r.cpu {
		per := time.Duration(c.seconds / float64(r.requests) * float64(time.Second))
		parts = append(parts, fmt.Sprintf("%d µs %s", per.Microseconds(), c.name))
	}
	return strings.Join(parts, " + ")
}

// driveOn is drive with p's CPU time metered.
func driveOn(p proc, name string, concurrency int, d time.Duration, do func(c *http.Client, worker, i int) (string, error)) result {
	return metered([]proc{p}, func() result { return drive(name, concurrency, d, do) })
}

// drive is drive for a scenario the main gateway serves, metered.
func (r *runner) drive(name string, concurrency int, d time.Duration, do func(c *http.Client, worker, i int) (string, error)) result {
	return driveOn(r.gw, name, concurrency, d, do)
}
