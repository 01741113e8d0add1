package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Redis cost of a turn (issue 32, SCALE-1..3): a gateway with `store
// redis` on a throwaway redis-server, driven with SendMessage and
// SendStreamingMessage (fresh message ids: every request is a turn).
// Around each run the scenario reads Redis' own counters:
//
//   - commands: a first, sequential pass of redisCostProbe requests under
//     MONITOR counts every command Redis ran, split into round trips (the
//     commands a client sent: scripts count once) and commands run inside
//     scripts;
//   - Redis time: a second pass at the run's concurrency reads INFO
//     commandstats (the time of the commands clients sent, scripts with
//     the commands they ran) and INFO cpu (the main thread's CPU, network
//     included) around the run;
//   - memory: INFO memory's used_memory and DBSIZE around the send run
//     (the tasks stay), and MEMORY USAGE of every key grouped by key shape.
//
// The background work of the instance (heartbeat lease, outbox, reaper)
// is measured while idle for as long and subtracted.

// redisCostName is the scenario's -only name.
const redisCostName = "redis-cost"

// redisCostProbe is the number of requests of the MONITOR pass.
const redisCostProbe = 200

// redisCost runs the scenario.
func (r *runner) redisCost() []result {
	fail := func(err error) []result {
		return []result{{name: "Redis cost per turn", extra: "error: " + err.Error()}}
	}
	rg, err := r.startRedisGateway("a2a-bench-rcost-", `		push {
			allow_private_networks 127.0.0.0/8
		}`)
	if err != nil {
		return fail(err)
	}
	defer rg.stop()
	rc := redis.NewClient(&redis.Options{Addr: rg.addr})
	defer rc.Close()
	ctx := context.Background()
	load, err := newRedisCostLoad(rg.url)
	if err != nil {
		return fail(err)
	}
	defer load.close()
	// Warm up (scripts loaded, connections open), then the idle rate.
	cl := newClient(1)
	for i := 0; i < 20; i++ {
		if _, err := load.send(cl, 0, i); err != nil {
			return fail(err)
		}
	}
	idle, err := measureRedis(ctx, rc, func() (int, time.Duration) { time.Sleep(r.duration); return 0, r.duration })
	if err != nil {
		return fail(err)
	}
	var out []result
	sendCPU := 0.0 // Redis CPU per blocking SendMessage, µs
	for _, sc := range []redisCostRow{
		{"Redis cost: SendMessage (blocking, new context)", load.send, true},
		{"Redis cost: SendStreamingMessage (new context)", load.stream, false},
		{"Redis cost: SendMessage with a push config, delivered", load.push, false},
	} {
		res, cpu, err := r.measureRedisCost(ctx, rc, cl, idle, sc, load.settle)
		if err != nil {
			return fail(err)
		}
		if sc.mem {
			sendCPU = cpu
		}
		out = append(out, res)
	}
	out = append(out, r.redisListpack(ctx, rc, load.send))
	return append(out, r.redisReplay(ctx, rc, func() (string, error) { return load.send(cl, 0, 0) }, sendCPU)...)
}

// redisCostRow is one measured request kind of the scenario; mem also
// measures the memory its tasks keep.
type redisCostRow struct {
	name string
	do   func(c *http.Client, w, i int) (string, error)
	mem  bool
}

// measureRedisCost counts the commands of redisCostProbe sequential
// requests under MONITOR, then reads INFO around a concurrent run, less
// the idle background; it returns the row and the Redis CPU per request.
func (r *runner) measureRedisCost(ctx context.Context, rc *redis.Client, cl *http.Client, idle redisDelta, sc redisCostRow, settle func()) (result, float64, error) {
	probe, err := monitorCommands(ctx, rc, func() int {
		for i := 0; i < redisCostProbe; i++ {
			if _, err := sc.do(cl, 0, i); err != nil {
				return i
			}
		}
		settle()
		return redisCostProbe
	})
	if err != nil {
		return result{}, 0, err
	}
	var res result
	m, err := measureRedis(ctx, rc, func() (int, time.Duration) {
		res = drive(sc.name, r.concurrency, r.duration, sc.do)
		settle()
		return res.requests, res.elapsed
	})
	if err != nil {
		return result{}, 0, err
	}
	m.subtractIdle(idle)
	res.extra = fmt.Sprintf("%.1f commands/req (%.1f round trips: %s); Redis time %.0f µs/req (commandstats), Redis CPU %.0f µs/req",
		probe.perReq(), probe.tripsPerReq(), probe.topList(), m.usecPerReq(probe), m.cpuPerReq())
	if sc.mem {
		res.extra += fmt.Sprintf("; memory %.0f B/task in %.1f keys/task", m.memPerReq(), m.keysPerReq())
	}
	fmt.Fprintf(os.Stderr, "%s\n  in scripts: %s\n  commandstats: %s\n", res.extra, probe.nestedList(), m.statsList())
	if sc.mem {
		if shapes, err := keyShapes(ctx, rc, res.requests+redisCostProbe+20); err == nil {
			fmt.Fprintf(os.Stderr, "  memory by key shape (bytes per task): %s\n", shapes)
		}
	}
	return res, m.cpuPerReq(), nil
}

// redisCostLoad sends the scenario's requests: a blocking send, a stream,
// and a send with a push config whose deliveries a local webhook counts.
type redisCostLoad struct {
	url       string
	hook      string
	srv       *http.Server
	delivered atomic.Int64
	pushed    atomic.Int64
}

// newRedisCostLoad starts the webhook receiver of the push requests.
func newRedisCostLoad(url string) (*redisCostLoad, error) {
	l := &redisCostLoad{url: url}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		l.delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	})}
	go func() { _ = l.srv.Serve(ln) }()
	l.hook = "http://" + ln.Addr().String() + "/hook"
	return l, nil
}

// close stops the webhook receiver.
func (l *redisCostLoad) close() { _ = l.srv.Close() }

// send is a blocking SendMessage in a new context.
func (l *redisCostLoad) send(c *http.Client, _, _ int) (string, error) {
	body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
	return expectTask(c, l.url+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED", nil)
}

// stream is a SendStreamingMessage in a new context, read to its end.
func (l *redisCostLoad) stream(c *http.Client, _, _ int) (string, error) {
	body := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
	resp, err := post(c, l.url+"/", benchToken, body)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, last := lastOfStream(resp.Body)
	if !bytes.Contains(last, []byte("TASK_STATE_INPUT_REQUIRED")) {
		return "", fmt.Errorf("stream did not end input-required")
	}
	return taskIDOf(last), nil
}

// push is a blocking SendMessage with an inline push config.
func (l *redisCostLoad) push(c *http.Client, _, _ int) (string, error) {
	params := sendParams("Create a VPC with two vSwitches.", "")
	params["configuration"] = map[string]any{"taskPushNotificationConfig": map[string]any{"url": l.hook, "token": "bench"}}
	id, err := expectTask(c, l.url+"/", benchToken, rpcBody("SendMessage", params), "TASK_STATE_INPUT_REQUIRED", nil)
	if err == nil {
		l.pushed.Add(1)
	}
	return id, err
}

// settle waits until every push job queued so far was delivered.
func (l *redisCostLoad) settle() {
	deadline := time.Now().Add(30 * time.Second)
	for l.delivered.Load() < l.pushed.Load() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // sleep: polling for the webhook's count
	}
}

// redisListpackValue is the hash-max-listpack-value the memory variant
// sets: task records (a JSON field of about 1 KiB) stay listpacks, whose
// fields cost a few bytes each instead of a hash table entry.
const redisListpackValue = "4096"

// redisListpack measures the memory per retained task of the blocking
// send with Redis' hash-max-listpack-value raised (an operator setting),
// at the run's concurrency, and puts the setting back.
func (r *runner) redisListpack(ctx context.Context, rc *redis.Client, send func(c *http.Client, w, i int) (string, error)) result {
	name := "Redis cost: memory per task with hash-max-listpack-value " + redisListpackValue
	old, err := rc.ConfigGet(ctx, "hash-max-listpack-value").Result()
	if err != nil {
		return result{name: name, extra: "error: " + err.Error()}
	}
	if err := rc.ConfigSet(ctx, "hash-max-listpack-value", redisListpackValue).Err(); err != nil {
		return result{name: name, extra: "error: " + err.Error()}
	}
	defer rc.ConfigSet(ctx, "hash-max-listpack-value", old["hash-max-listpack-value"])
	var res result
	m, err := measureRedis(ctx, rc, func() (int, time.Duration) {
		res = drive(name, r.concurrency, r.duration, send)
		return res.requests, res.elapsed
	})
	if err != nil {
		return result{name: name, extra: "error: " + err.Error()}
	}
	res.extra = fmt.Sprintf("memory %.0f B/task in %.1f keys/task", m.memPerReq(), m.keysPerReq())
	fmt.Fprintf(os.Stderr, "%s\n  %s\n", name, res.extra)
	return res
}

// redisReplay records one blocking SendMessage's commands and replays
// them in each replay shape (redis_replay.go): the model's prediction (1
// s / the Redis CPU per turn measured behind the gateway, sendCPU µs)
// against what each replay reached.
func (r *runner) redisReplay(ctx context.Context, rc *redis.Client, send func() (string, error), sendCPU float64) []result {
	t, err := recordTurn(ctx, rc, send)
	if err != nil {
		return []result{{name: "Redis replay", extra: "error: " + err.Error()}}
	}
	var out []result
	for _, sh := range replayShapes {
		res := result{name: "Redis replay of a blocking SendMessage: " + sh.name}
		rr, err := replay(ctx, rc, t, r.duration, sh)
		if err != nil {
			res.extra = "error: " + err.Error()
			out = append(out, res)
			continue
		}
		res.requests, res.elapsed = int(rr.turns), rr.elapsed
		model := 1e6 / max(sendCPU, 1)
		atFull := rr.turnsPerSec() / max(rr.busy(), 0.01)
		res.extra = fmt.Sprintf("%d commands sent per turn, %.1f new keys per turn; %.0f turns/s with Redis' main thread %.0f %% busy (%.1f µs CPU per turn) → %.0f turns/s at 100 %%; model (1 s / %.0f µs measured behind the gateway): %.0f turns/s; replay/model %.2f",
			len(t.cmds), rr.keysPerTurn(), rr.turnsPerSec(), 100*rr.busy(), rr.cpuPerTurn(), atFull, sendCPU, model, atFull/model)
		fmt.Fprintf(os.Stderr, "%s\n  %s\n", res.name, res.extra)
		out = append(out, res)
	}
	return out
}

// probeCounts is what the MONITOR pass saw.
type probeCounts struct {
	requests    int
	top, nested map[string]int // command name → count
}

func (p probeCounts) sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (p probeCounts) perReq() float64 {
	return float64(p.sum(p.top)+p.sum(p.nested)) / float64(max(1, p.requests))
}

func (p probeCounts) tripsPerReq() float64 {
	return float64(p.sum(p.top)) / float64(max(1, p.requests))
}

func (p probeCounts) topList() string    { return countList(p.top, p.requests) }
func (p probeCounts) nestedList() string { return countList(p.nested, p.requests) }

// countList renders "evalsha ×2, get ×1" per request, largest first.
func countList(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range m {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || l[i].v == l[j].v && l[i].k < l[j].k })
	var parts []string
	for _, e := range l {
		per := float64(e.v) / float64(max(1, n))
		if per < 0.05 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s ×%.2g", e.k, per))
	}
	return strings.Join(parts, ", ")
}

// monitorCommands runs run (which returns how many requests it made)
// under MONITOR and counts the commands, minus those of the same time
// idle: the idle commands are what the instance's background loops send,
// measured right after for as long.
func monitorCommands(ctx context.Context, rc *redis.Client, run func() int) (probeCounts, error) {
	count := func(f func() int) (probeCounts, time.Duration, error) {
		p := probeCounts{top: map[string]int{}, nested: map[string]int{}}
		var d time.Duration
		err := underMonitor(ctx, rc, func(line string) {
			name, lua, ok := parseMonitor(line)
			if !ok || name == "info" || name == "monitor" {
				return
			}
			if lua {
				p.nested[name]++
			} else {
				p.top[name]++
			}
		}, func() {
			t0 := time.Now()
			p.requests = f()
			d = time.Since(t0)
		})
		return p, d, err
	}
	p, d, err := count(run)
	if err != nil {
		return p, err
	}
	idle, _, err := count(func() int { time.Sleep(d); return 0 })
	if err != nil {
		return p, err
	}
	for k, v := range idle.top {
		p.top[k] = max(0, p.top[k]-v)
	}
	for k, v := range idle.nested {
		p.nested[k] = max(0, p.nested[k]-v)
	}
	return p, nil
}

// underMonitor runs run while `redis-cli monitor` feeds every line Redis
// reports to line (from before run starts to after it ends; line is
// called on another goroutine, and not after underMonitor returns).
func underMonitor(ctx context.Context, rc *redis.Client, line func(string), run func()) error {
	host, port, _ := strings.Cut(rc.Options().Addr, ":")
	cmd := exec.CommandContext(ctx, "redis-cli", "-h", host, "-p", port, "monitor")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redis-cli monitor: %w", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line(sc.Text())
		}
	}()
	time.Sleep(300 * time.Millisecond)
	run()
	time.Sleep(300 * time.Millisecond)
	_ = cmd.Process.Kill()
	<-done
	_ = cmd.Wait()
	return nil
}

// parseMonitor reads a MONITOR line: `ts [db addr] "cmd" …` (addr "lua"
// for a command a script ran).
func parseMonitor(line string) (name string, lua bool, ok bool) {
	i := strings.Index(line, "[")
	j := strings.Index(line, "]")
	if i < 0 || j < i {
		return "", false, false
	}
	lua = strings.HasSuffix(line[i:j], " lua")
	rest := strings.TrimSpace(line[j+1:])
	if !strings.HasPrefix(rest, `"`) {
		return "", false, false
	}
	rest = rest[1:]
	k := strings.Index(rest, `"`)
	if k < 0 {
		return "", false, false
	}
	return strings.ToLower(rest[:k]), lua, true
}
