package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisDelta is what INFO says changed around a run.
type redisDelta struct {
	requests int
	elapsed  time.Duration
	usec     map[string]float64 // commandstats usec per command
	cpuUsec  float64            // main thread user+sys
	memBytes float64
	keys     float64
}

// measureRedis reads INFO around run (which returns its request count and
// elapsed time).
func measureRedis(ctx context.Context, rc *redis.Client, run func() (int, time.Duration)) (redisDelta, error) {
	if err := rc.ConfigResetStat(ctx).Err(); err != nil {
		return redisDelta{}, err
	}
	before, err := rc.Info(ctx, "cpu", "memory", "keyspace").Result()
	if err != nil {
		return redisDelta{}, err
	}
	n, d := run()
	after, err := rc.Info(ctx, "cpu", "memory", "keyspace", "commandstats").Result()
	if err != nil {
		return redisDelta{}, err
	}
	b, a := infoFields(before), infoFields(after)
	m := redisDelta{requests: n, elapsed: d, usec: map[string]float64{}}
	m.cpuUsec = 1e6 * ((a["used_cpu_user_main_thread"] + a["used_cpu_sys_main_thread"]) - (b["used_cpu_user_main_thread"] + b["used_cpu_sys_main_thread"]))
	m.memBytes = a["used_memory"] - b["used_memory"]
	m.keys = a["db0.keys"] - b["db0.keys"]
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		name, rest, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if strings.HasPrefix(name, "config") || name == "info" {
			continue
		}
		for _, f := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(f, "usec="); ok {
				m.usec[name], _ = strconv.ParseFloat(v, 64)
			}
		}
	}
	return m, nil
}

// infoFields parses INFO's "k:v" lines (db0's "keys=N" as db0.keys).
func infoFields(s string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(s, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		if k == "db0" {
			for _, f := range strings.Split(v, ",") {
				if kv, ok := strings.CutPrefix(f, "keys="); ok {
					out["db0.keys"], _ = strconv.ParseFloat(kv, 64)
				}
			}
			continue
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			out[k] = f
		}
	}
	return out
}

// subtractIdle removes the idle run's rate of background work.
func (m *redisDelta) subtractIdle(idle redisDelta) {
	scale := m.elapsed.Seconds() / idle.elapsed.Seconds()
	m.cpuUsec = max(0, m.cpuUsec-idle.cpuUsec*scale)
	for k, v := range idle.usec {
		m.usec[k] = max(0, m.usec[k]-v*scale)
	}
}

// usecPerReq is the commandstats time of the commands clients sent: the
// scripts (their time includes the commands they ran) and plain commands,
// counting of each command only the share the probe saw sent by a
// client (not run by a script).
func (m redisDelta) usecPerReq(p probeCounts) float64 {
	total := 0.0
	for k, v := range m.usec {
		name := strings.SplitN(k, "|", 2)[0]
		top, nested := p.top[name], p.nested[name]
		if top+nested == 0 {
			if name == "evalsha" || name == "eval" || name == "fcall" {
				total += v
			}
			continue
		}
		total += v * float64(top) / float64(top+nested)
	}
	return total / float64(max(1, m.requests))
}

func (m redisDelta) cpuPerReq() float64  { return m.cpuUsec / float64(max(1, m.requests)) }
func (m redisDelta) memPerReq() float64  { return m.memBytes / float64(max(1, m.requests)) }
func (m redisDelta) keysPerReq() float64 { return m.keys / float64(max(1, m.requests)) }

func (m redisDelta) statsList() string {
	var parts []string
	for k, v := range m.usec {
		if per := v / float64(max(1, m.requests)); per >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s %.1f µs", k, per))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// keyShapes sums MEMORY USAGE over every key, grouped by the key with
// its ids replaced by "*", per task (n tasks).
func keyShapes(ctx context.Context, rc *redis.Client, n int) (string, error) {
	sums := map[string]int64{}
	counts := map[string]int{}
	iter := rc.Scan(ctx, 0, "*", 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		u, err := rc.MemoryUsage(ctx, k, 0).Result()
		if err != nil {
			continue
		}
		shape := keyShape(k)
		sums[shape] += u
		counts[shape]++
	}
	if err := iter.Err(); err != nil {
		return "", err
	}
	var parts []string
	for k, v := range sums {
		if per := float64(v) / float64(n); per >= 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f B (%d keys)", k, per, counts[k]))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, "; "), nil
}

// keyShape replaces the id inside a key's hash tag and any id-looking
// segment after it with "*".
func keyShape(k string) string {
	if i := strings.Index(k, "{"); i >= 0 {
		if j := strings.Index(k[i:], "}"); j > 0 {
			tag := k[i+1 : i+j]
			if c := strings.Index(tag, ":"); c >= 0 {
				tag = tag[:c+1] + "*"
			}
			k = k[:i] + "{" + tag + "}" + k[i+j+1:]
		}
	}
	segs := strings.Split(k, ":")
	for i, s := range segs {
		if len(s) >= 16 && !strings.ContainsAny(s, "{}") {
			segs[i] = "*"
		}
	}
	return strings.Join(segs, ":")
}
