package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Scale-out scenarios (SCALE-1, SCALE-4): two gateway processes on one
// redis-server behind a Caddy balancer (a third process of the same
// binary, README's reverse_proxy config), next to one gateway behind the
// same balancer; and the cross-instance latency of live events.

// Scenario names of the scale-out runs.
const (
	scaleOneName   = "SendMessage, 1 gateway (store redis) via Caddy balancer"
	scaleTwoName   = "SendMessage, 2 gateways on 1 Redis via Caddy balancer"
	xinstLatencyNm = "SubscribeToTask across instances (event on A → SSE on B)"
)

// scaleCluster is a redis-server, gateways A and B on it, and the
// balancer with two sites: both gateways, and A alone.
type scaleCluster struct {
	dir           string
	stops         []func()
	a, b, lb      *gateway
	aSlow, bSlow  string    // the gateways' slow echo sites
	lbBoth, lbOne string    // balancer sites
	gatewayAddrs  [2]string // the gateways' plain echo sites (host:port)
	redisPid      string
}

func (c *scaleCluster) close() {
	for i := len(c.stops) - 1; i >= 0; i-- {
		c.stops[i]()
	}
	_ = os.RemoveAll(c.dir)
}

// scaleGatewayConfig is one gateway: store redis, a plain echo site
// (port fast) and a slow one (port slow, events 10 ms apart).
func scaleGatewayConfig(dataDir, redisAddr string, fast, slow int) string {
	site := func(port int, name, backend string) string {
		return fmt.Sprintf(`http://127.0.0.1:%d {
	a2a {
		card {
			name %s
		}
		auth {
			bearer %s
			no_env
		}
		%s
		max_concurrent_turns 20000
	}
}
`, port, name, benchToken, backend)
	}
	return redisGlobalOptions(dataDir, redisAddr, "bench-scale:") + site(fast, "bench-agent", "backend echo") +
		site(slow, "bench-slow", "backend echo {\n\t\t\tdelay 10ms\n\t\t\tchunks 100\n\t\t}")
}

// balancerConfig is README's balancer (Scaling out, SCALE-4) on two
// loopback sites: to both gateways, and to the first alone.
func balancerConfig(both, one int, upstreams [2]string) string {
	site := func(port int, ups string) string {
		return fmt.Sprintf(`http://127.0.0.1:%d {
	reverse_proxy %s {
		lb_policy least_conn
		health_uri /health
		health_interval 5s
		flush_interval -1
		stream_timeout 24h
		stream_close_delay 5m
	}
}
`, port, ups)
	}
	return "{\n\tadmin off\n\tpersist_config off\n\tgrace_period 1s\n}\n" +
		site(both, upstreams[0]+" "+upstreams[1]) + site(one, upstreams[0])
}

// startScaleCluster starts redis-server, the two gateways and the
// balancer.
func (r *runner) startScaleCluster() (*scaleCluster, error) {
	dir, err := os.MkdirTemp("", "a2a-bench-scale-")
	if err != nil {
		return nil, err
	}
	c := &scaleCluster{dir: dir}
	stopRedis, addr, err := startRedis(dir)
	if err != nil {
		c.close()
		return nil, err
	}
	c.stops = append(c.stops, stopRedis)
	c.redisPid = redisPid(addr)
	var ports [6]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			c.close()
			return nil, err
		}
	}
	for i, g := range []**gateway{&c.a, &c.b} {
		gdir := filepath.Join(dir, fmt.Sprint("gw", i))
		if err := os.MkdirAll(gdir, 0o755); err != nil {
			c.close()
			return nil, err
		}
		fast, slow := ports[2*i], ports[2*i+1]
		c.gatewayAddrs[i] = fmt.Sprintf("127.0.0.1:%d", fast)
		gw, err := startGateway(r.bin, gdir, scaleGatewayConfig(filepath.Join(gdir, "data"), addr, fast, slow), "http://"+c.gatewayAddrs[i]+"/health")
		if err != nil {
			c.close()
			return nil, err
		}
		*g = gw
		c.stops = append(c.stops, gw.stop)
	}
	c.aSlow = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	c.bSlow = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	c.lbBoth, c.lbOne = fmt.Sprintf("http://127.0.0.1:%d", ports[4]), fmt.Sprintf("http://127.0.0.1:%d", ports[5])
	ldir := filepath.Join(dir, "lb")
	if err := os.MkdirAll(ldir, 0o755); err != nil {
		c.close()
		return nil, err
	}
	lb, err := startGateway(r.bin, ldir, balancerConfig(ports[4], ports[5], c.gatewayAddrs), c.lbBoth+"/health")
	if err != nil {
		c.close()
		return nil, err
	}
	c.lb = lb
	c.stops = append(c.stops, lb.stop)
	return c, nil
}

// redisPid finds the redis-server listening on addr (host:port) by its
// command line ("" if not found).
func redisPid(addr string) string {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err == nil && strings.HasPrefix(string(b), "redis-server") && strings.Contains(string(b), addr) {
			return filepath.Base(filepath.Dir(d))
		}
	}
	return ""
}

// cpuShares measures the CPU seconds each process of the cluster (and
// this load generator) spends while run runs.
func (c *scaleCluster) cpuShares(run func() result) result {
	procs := []proc{procOf("A", c.a.cmd.Process.Pid), procOf("B", c.b.cmd.Process.Pid),
		procOf("balancer", c.lb.cmd.Process.Pid), {name: "redis", pid: c.redisPid}, {name: "load", pid: "self"}}
	res := metered(procs, run)
	parts := make([]string, len(res.cpu))
	for i, u := range res.cpu {
		parts[i] = fmt.Sprintf("%s %.1f", u.name, u.seconds)
	}
	res.extra = fmt.Sprintf("CPU s over %.0fs on %d CPUs: %s", res.elapsed.Seconds(), runtime.NumCPU(), strings.Join(parts, ", "))
	res.cpu = res.cpu[:4] // per request: the servers, not the load generator
	return res
}

// scaleSend measures SendMessage through the balancer to one gateway,
// then to two, in the same run (SCALE-4: the ratio is the scale-out
// gain; goal ≥ 1.6× where the balancer and the load generator have
// cores of their own).
func (r *runner) scaleSend() []result {
	c, err := r.startScaleCluster()
	if err != nil {
		return []result{{name: scaleTwoName, extra: "error: " + err.Error()}}
	}
	defer c.close()
	send := func(name, url string) result {
		return c.cpuShares(func() result {
			return drive(name, r.concurrency, r.duration, func(cl *http.Client, _, _ int) (string, error) {
				body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
				return expectTask(cl, url+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED", nil)
			})
		})
	}
	one := send(scaleOneName, c.lbOne)
	two := send(scaleTwoName, c.lbBoth)
	one.ratioTo = []string{"SendMessage (echo, store redis, auth)"}
	two.ratioTo = []string{scaleOneName}
	return []result{one, two}
}

// sseArrival is one event of a stream: its SSE id, whether it is a Task
// snapshot, and when it arrived.
type sseArrival struct {
	id   string
	task bool
	at   time.Time
}

// readSSE posts a streaming JSON-RPC call and records every event's
// arrival until the stream ends.
func readSSE(cl *http.Client, url string, body []byte) ([]sseArrival, error) {
	resp, err := post(cl, url+"/", benchToken, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	var out []sseArrival
	err = eachEvent(sse.NewReader(resp.Body, maxEvent), func(ev sse.Event) {
		out = append(out, sseArrival{id: ev.ID, task: bytes.Contains(ev.Data, []byte(`"result":{"task"`)), at: time.Now()})
	})
	return out, err
}

// crossInstanceSubscribe measures how much later an event of a turn
// running on A reaches a SubscribeToTask stream on B than A's own stream
// (append on A → XREAD on B → SSE), over concurrent turns of 100 events
// 10 ms apart; p50/p99 are over events, throughput is events/s matched.
func (r *runner) crossInstanceSubscribe() []result {
	c, err := r.startScaleCluster()
	if err != nil {
		return []result{{name: xinstLatencyNm, extra: "error: " + err.Error()}}
	}
	defer c.close()
	const workers = 8
	var (
		mu   sync.Mutex
		lats []time.Duration
		errs int
		wg   sync.WaitGroup
	)
	cl := newClient(2 * workers)
	defer cl.CloseIdleConnections()
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < r.duration {
				d, err := followOnce(cl, c.aSlow, c.bSlow)
				mu.Lock()
				if err != nil {
					errs++
				}
				lats = append(lats, d...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(lats, func(i, j int) bool { return lats[i] < lats[j] })
	return []result{{name: xinstLatencyNm, requests: len(lats), errors: errs, elapsed: elapsed,
		p50: quantile(lats, 0.50), p99: quantile(lats, 0.99),
		extra: fmt.Sprintf("B's SSE arrival minus A's, %d concurrent turns (events/s in req/s); goal p99 ≤ 5 ms", workers)}}
}

// followOnce streams one turn on a, follows it with SubscribeToTask on b
// from its Task, and returns every event's arrival on b minus on a.
func followOnce(cl *http.Client, a, b string) ([]time.Duration, error) {
	resp, err := post(cl, a+"/", benchToken, rpcBody("SendStreamingMessage", sendParams(strings.Repeat("x", 200), "")))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	sa := sse.NewReader(resp.Body, maxEvent)
	var onA []sseArrival
	first, err := sa.Next()
	if err != nil {
		return nil, fmt.Errorf("stream on A ended early")
	}
	_, rest, ok := strings.Cut(string(first.Data), `"task":{"id":"`)
	if !ok {
		return nil, fmt.Errorf("first event is not a Task")
	}
	taskID, _, _ := strings.Cut(rest, `"`)
	if taskID == "" {
		return nil, fmt.Errorf("stream on A ended early")
	}
	var onB []sseArrival
	var errB error
	done := make(chan struct{})
	go func() {
		defer close(done)
		onB, errB = readSSE(cl, b, rpcBody("SubscribeToTask", map[string]any{"id": taskID}))
	}()
	_ = eachEvent(sa, func(ev sse.Event) { onA = append(onA, sseArrival{id: ev.ID, at: time.Now()}) })
	<-done
	if errB != nil {
		return nil, errB
	}
	atA := map[string]time.Time{}
	for _, e := range onA {
		atA[e.id] = e.at
	}
	var out []time.Duration
	for _, e := range onB {
		if ta, ok := atA[e.id]; ok && !e.task && e.id != "" {
			out = append(out, e.at.Sub(ta))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no event seen on both instances")
	}
	return out, nil
}
