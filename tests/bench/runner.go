package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// runner holds the run's settings and results.
type runner struct {
	root        string
	duration    time.Duration
	concurrency int
	only        map[string]bool
	listSizes   []int
	idleStreams int

	results []result
	commit  string

	fast, slow, respond, bare string // base URLs
	admin                     string // admin endpoint (pprof goroutine counts)
	pushLocal, pushRedis      string // sites with push on (local outbox / Redis Streams)
	redisAddr                 string
	bin                       string // the built gateway (store_redis.go starts a second one)
	gw                        proc   // the main gateway's process, metered by r.drive
	jsProc                    proc   // the JS SDK server's process while it runs
}

// benchToken is the bearer token of the benchmarked sites.
const benchToken = "bench-token"

// want reports whether scenario name is selected (all when none is).
func (r *runner) want(name string) bool { return len(r.only) == 0 || r.only[name] }

// caddyfile returns the Caddyfile of the benchmarked gateway, one site per
// port.
func (r *runner) caddyfile(dataDir string, ports [6]int) string {
	var principals strings.Builder
	for _, n := range r.listSizes {
		fmt.Fprintf(&principals, "\t\t\tprincipal lister%d bearer tok-%d\n", n, n)
	}
	card := `		card {
			name bench-agent
			description "Benchmark agent for the caddy-a2a load harness."
			skill echo {
				name Echo
				description "Echoes the prompt back to the caller."
				tags echo bench
			}
		}
`
	var b strings.Builder
	fmt.Fprintf(&b, `{
	admin 127.0.0.1:%d
	persist_config off
	grace_period 1s
	servers {
		protocols h1 h2 h2c
	}
	a2a {
		data_dir %s
	}
}
`, ports[3], dataDir)
	fmt.Fprintf(&b, `http://127.0.0.1:%d {
	a2a {
%s		auth {
			bearer %s
%s			no_env
		}
		backend echo
		max_concurrent_turns 20000
		websocket {
			max_in_flight 4096
		}
		%s
	}
}
`, ports[0], card, benchToken, principals.String(), grpcBlock())
	fmt.Fprintf(&b, `http://127.0.0.1:%d {
	a2a {
%s		auth {
			bearer %s
			no_env
		}
		backend echo {
			chunks 1
			delay 1h
		}
		max_concurrent_turns 20000
		keep_alive 30s
	}
}
`, ports[1], card, benchToken)
	fmt.Fprintf(&b, `http://127.0.0.1:%d {
	header Content-Type application/json
	respond `+"`"+`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t1","contextId":"c1","status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-01-01T00:00:00.000Z"}}}}`+"`"+` 200
}
`, ports[2])
	r.pushSites(&b, card, ports)
	return b.String()
}

// pushSites writes the push scenario's sites: the local outbox, and the
// Redis Streams queue when a redis-server runs.
func (r *runner) pushSites(b *strings.Builder, card string, ports [6]int) {
	queues := []string{"queue local-file"}
	sitePorts := []int{ports[4]}
	if r.redisAddr != "" {
		queues = append(queues, "queue redis-streams {\n\t\t\t\tredis_url redis://"+r.redisAddr+"/0\n\t\t\t}")
		sitePorts = append(sitePorts, ports[5])
	}
	for i, q := range queues {
		fmt.Fprintf(b, `http://127.0.0.1:%d {
	a2a {
%s		push {
			%s
			allow_private_networks 127.0.0.0/8
		}
		max_concurrent_turns 20000
	}
}
`, sitePorts[i], card, q)
	}
}

// sitePorts picks the gateway's free ports and sets the sites' URLs.
func (r *runner) sitePorts() ([6]int, error) {
	var ports [6]int
	for i := range ports {
		var err error
		if ports[i], err = freePort(); err != nil {
			return ports, err
		}
	}
	r.fast = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	r.slow = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	r.respond = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	r.admin = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	r.pushLocal = fmt.Sprintf("http://127.0.0.1:%d", ports[4])
	return ports, nil
}

// run builds and starts the gateway and runs the selected scenarios.
func (r *runner) run() error {
	r.commit = gitCommit(r.root)
	dir, err := os.MkdirTemp("", "a2a-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := buildBinary(r.root, dir)
	if err != nil {
		return err
	}
	r.bin = bin
	dataDir := filepath.Join(dir, "data")
	if err := r.preload(dataDir); err != nil {
		return err
	}
	ports, err := r.sitePorts()
	if err != nil {
		return err
	}
	if r.want("push") {
		stopRedis, addr, err := startRedis(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "push over Redis Streams skipped:", err)
		} else {
			defer stopRedis()
			r.redisAddr = addr
			r.pushRedis = fmt.Sprintf("http://127.0.0.1:%d", ports[5])
		}
	}
	g, err := startGateway(bin, dir, r.caddyfile(dataDir, ports), r.fast+"/health")
	if err != nil {
		return err
	}
	defer g.stop()
	r.gw = procOf("gateway", g.cmd.Process.Pid)
	stopBare, bareURL, err := startBareBaseline()
	if err != nil {
		return err
	}
	defer stopBare()
	r.bare = bareURL

	r.add(r.baselines())
	if r.want("send") || r.want("stream") {
		fmt.Fprintln(os.Stderr, "baseline: JS SDK server")
		r.add(r.jsBaselines())
	}
	for _, s := range []struct {
		name string
		fn   func() []result
	}{
		{"send", r.sendMessage},
		{"send-dedupe-hits", r.sendDedupeHits},
		{"grpc-send", r.grpcSend},
		{"grpc-listen-send", r.grpcListenSend}, // grpc_listen.go
		{"stream", r.streamMessage},
		{"ws-send", r.wsSendMessage},
		{"ws-stream", r.wsStreamMessage},
		{"card", r.card},
		{"get", r.getTask},
		{"list", r.listTasks},
		{"push", r.pushDeliveries},
		{"contexts", func() []result { return r.idleContexts(g) }},
		{"streams", func() []result { return r.idleStreamsScenario(g) }},
		{"scale-send", r.scaleSend}, {"xinst-subscribe", r.crossInstanceSubscribe}, // scale.go
		{redisCostName, r.redisCost}, // redis_cost.go
	} {
		if r.want(s.name) {
			fmt.Fprintln(os.Stderr, "scenario", s.name)
			r.add(s.fn())
		}
	}
	return nil
}

// invalid lists the scenarios whose run did not measure what they name.
func (r *runner) invalid() []string {
	var out []string
	for _, res := range r.results {
		if res.invalid != "" {
			out = append(out, res.name+": "+res.invalid)
		}
	}
	return out
}

// add appends scenario results.
func (r *runner) add(rs []result) { r.results = append(r.results, rs...) }
