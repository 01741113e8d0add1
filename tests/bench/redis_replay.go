package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The load simulation of the capacity model (issue 32): the commands one
// blocking SendMessage sent Redis, recorded under MONITOR, are replayed
// at concurrency straight against the same throwaway redis-server (its
// script cache holds the gateway's scripts), with fresh task and context
// ids per replayed turn (every replay writes new keys: real work). The
// replaying clients pipeline many turns at once, so Redis' main thread,
// not the gateways, is the bound. Around the replay the scenario reads
// INFO cpu: the turns/s the replay reached, the share of the main thread
// it used, hence the turns/s one primary carries at 100 %, against the
// model's 1 s / (Redis CPU per turn measured behind the gateway).

// replayShape is how a replay sends: workers connections, each with
// depth turns in flight (one pipeline per step of the turn). Depth 1 is
// what gateways do (go-redis sends a command per round trip on each
// pooled connection); a deep pipeline shows Redis' cost without the
// per-round-trip work of its event loop.
type replayShape struct {
	name           string
	workers, depth int
}

// replayShapes are the replays the scenario runs.
var replayShapes = []replayShape{
	{"64 connections, one command each in flight (as gateways send)", 64, 1},
	{"4 connections, 32 turns pipelined each", 4, 32},
}

// recordedTurn is one turn's commands as Redis saw them from the gateway
// (scripts as EVALSHA, not what they ran), and the ids to replace.
type recordedTurn struct {
	cmds          [][]string
	taskID, ctxID string
}

// recordTurn runs do (one request, returning its task id) under MONITOR
// and keeps the commands that name the task or its context.
func recordTurn(ctx context.Context, rc *redis.Client, do func() (string, error)) (recordedTurn, error) {
	var lines [][]string
	var id string
	var derr error
	err := underMonitor(ctx, rc, func(line string) {
		if args, ok := monitorArgs(line); ok {
			lines = append(lines, args)
		}
	}, func() { id, derr = do() })
	if err == nil {
		err = derr
	}
	if err != nil {
		return recordedTurn{}, err
	}
	t := recordedTurn{taskID: id}
	for _, args := range lines {
		for _, a := range args {
			if i := strings.Index(a, "{x:"); i >= 0 && t.ctxID == "" && strings.Contains(a[i:], "}") {
				tag := a[i+3 : i+strings.Index(a[i:], "}")]
				t.ctxID = tag[strings.LastIndex(tag, ":")+1:]
			}
		}
	}
	for _, args := range lines {
		joined := strings.Join(args, " ")
		if strings.Contains(joined, id) || t.ctxID != "" && strings.Contains(joined, t.ctxID) {
			t.cmds = append(t.cmds, args)
		}
	}
	if len(t.cmds) == 0 || t.ctxID == "" {
		return t, fmt.Errorf("recorded no command of task %q", id)
	}
	return t, nil
}

// fresh returns the turn's commands with ids of the same length (a task
// JSON's byte offsets stay) made unique by n.
func (t recordedTurn) fresh(n int64) [][]any {
	tag := fmt.Sprintf("%x", n)
	swap := func(id string) string {
		if len(tag) >= len(id) {
			return id
		}
		return id[:len(id)-len(tag)] + tag
	}
	r := strings.NewReplacer(t.taskID, swap(t.taskID), t.ctxID, swap(t.ctxID))
	out := make([][]any, len(t.cmds))
	for i, c := range t.cmds {
		args := make([]any, len(c))
		for j, a := range c {
			args[j] = r.Replace(a)
		}
		out[i] = args
	}
	return out
}

// replaySeq numbers replayed turns across replays (fresh ids).
var replaySeq atomic.Int64

// replayResult is what a replay measured.
type replayResult struct {
	turns   int64
	elapsed time.Duration
	cpuUsec float64 // Redis main thread
	newKeys float64 // keys the replay left (a check that it wrote)
}

func (r replayResult) turnsPerSec() float64 { return float64(r.turns) / r.elapsed.Seconds() }
func (r replayResult) busy() float64        { return r.cpuUsec / 1e6 / r.elapsed.Seconds() }
func (r replayResult) cpuPerTurn() float64  { return r.cpuUsec / float64(max(1, r.turns)) }
func (r replayResult) keysPerTurn() float64 { return r.newKeys / float64(max(1, r.turns)) }

// replay runs t's commands for d in shape sh: each worker sends the k-th
// command of sh.depth fresh turns in one pipeline, step after step. A
// reply error (a refused lease, a script error) fails the run.
func replay(ctx context.Context, rc *redis.Client, t recordedTurn, d time.Duration, sh replayShape) (replayResult, error) {
	var turns atomic.Int64
	var firstErr error
	var errOnce sync.Once
	before, err := rc.Info(ctx, "cpu", "keyspace").Result()
	if err != nil {
		return replayResult{}, err
	}
	start := time.Now()
	stop := start.Add(d)
	var wg sync.WaitGroup
	for range sh.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := redis.NewClient(&redis.Options{Addr: rc.Options().Addr, PoolSize: 1})
			defer c.Close()
			for time.Now().Before(stop) {
				batch := make([][][]any, sh.depth)
				for i := range batch {
					batch[i] = t.fresh(replaySeq.Add(1))
				}
				for step := range t.cmds {
					cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
						for _, turn := range batch {
							p.Do(ctx, turn[step]...)
						}
						return nil
					})
					if err != nil && err != redis.Nil {
						errOnce.Do(func() { firstErr = fmt.Errorf("replayed %q: %w", t.cmds[step][0], err) })
						return
					}
					_ = cmds
				}
				turns.Add(int64(sh.depth))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	after, err := rc.Info(ctx, "cpu", "keyspace").Result()
	if err != nil {
		return replayResult{}, err
	}
	b, a := infoFields(before), infoFields(after)
	cpu := 1e6 * ((a["used_cpu_user_main_thread"] + a["used_cpu_sys_main_thread"]) - (b["used_cpu_user_main_thread"] + b["used_cpu_sys_main_thread"]))
	return replayResult{turns: turns.Load(), elapsed: elapsed, cpuUsec: cpu, newKeys: a["db0.keys"] - b["db0.keys"]}, firstErr
}

// monitorArgs parses a MONITOR line sent by a client (not run by a
// script): `ts [db addr] "arg" "arg" …`, each argument unquoted.
func monitorArgs(line string) ([]string, bool) {
	i := strings.Index(line, "[")
	j := strings.Index(line, "]")
	if i < 0 || j < i || strings.HasSuffix(line[i:j], " lua") {
		return nil, false
	}
	rest := line[j+1:]
	var args []string
	for {
		rest = strings.TrimLeft(rest, " ")
		if rest == "" {
			break
		}
		if rest[0] != '"' {
			return nil, false
		}
		a, n, ok := unquoteRepr(rest)
		if !ok {
			return nil, false
		}
		args = append(args, a)
		rest = rest[n:]
	}
	if len(args) == 0 {
		return nil, false
	}
	switch strings.ToLower(args[0]) {
	case "info", "monitor", "ping", "client", "hello", "config":
		return nil, false
	}
	return args, true
}

// unquoteRepr reads one quoted argument as Redis writes it (sdscatrepr:
// \" \\ \n \r \t \a \b \xHH) from the start of s; it returns the value
// and how many bytes of s it took.
func unquoteRepr(s string) (string, int, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c != '\\':
			b.WriteByte(c)
		case i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'a':
				b.WriteByte('\a')
			case 'b':
				b.WriteByte('\b')
			case 'x':
				if i+2 >= len(s) {
					return "", 0, false
				}
				v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
				if err != nil {
					return "", 0, false
				}
				b.WriteByte(byte(v))
				i += 2
			default:
				b.WriteByte(s[i])
			}
		}
	}
	return "", 0, false
}
