package main

import (
	"bufio"
	"bytes"
	"context"
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

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
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
}

const benchToken = "bench-token"

func (r *runner) want(name string) bool { return len(r.only) == 0 || r.only[name] }

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
	}
}
`, ports[0], card, benchToken, principals.String())
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
	queues := []string{"queue local-file"}
	sitePorts := []int{ports[4]}
	if r.redisAddr != "" {
		queues = append(queues, "queue redis-streams {\n\t\t\t\tredis_url redis://"+r.redisAddr+"/0\n\t\t\t}")
		sitePorts = append(sitePorts, ports[5])
	}
	for i, q := range queues {
		fmt.Fprintf(&b, `http://127.0.0.1:%d {
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
	return b.String()
}

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
	dataDir := filepath.Join(dir, "data")
	if err := r.preload(dataDir); err != nil {
		return err
	}
	var ports [6]int
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return err
		}
	}
	r.fast = fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	r.slow = fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	r.respond = fmt.Sprintf("http://127.0.0.1:%d", ports[2])
	r.admin = fmt.Sprintf("http://127.0.0.1:%d", ports[3])
	r.pushLocal = fmt.Sprintf("http://127.0.0.1:%d", ports[4])
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
	stopBare, bareURL, err := startBareBaseline()
	if err != nil {
		return err
	}
	defer stopBare()
	r.bare = bareURL

	r.add(r.baselines())
	for _, s := range []struct {
		name string
		fn   func() []result
	}{
		{"send", r.sendMessage},
		{"stream", r.streamMessage},
		{"card", r.card},
		{"get", r.getTask},
		{"list", r.listTasks},
		{"push", r.pushDeliveries},
		{"contexts", func() []result { return r.idleContexts(g) }},
		{"streams", func() []result { return r.idleStreamsScenario(g) }},
	} {
		if r.want(s.name) {
			fmt.Fprintln(os.Stderr, "scenario", s.name)
			r.add(s.fn())
		}
	}
	return nil
}

func (r *runner) add(rs []result) { r.results = append(r.results, rs...) }

// preload stores the tasks the ListTasks scenario pages through, straight
// into the SQLite file the gateway will open.
func (r *runner) preload(dataDir string) error {
	if !r.want("list") || len(r.listSizes) == 0 {
		return nil
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	st, err := store.OpenSQLite(filepath.Join(dataDir, "a2a.db"), store.SQLiteOptions{Durability: "normal"})
	if err != nil {
		return err
	}
	defer st.Close()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, n := range r.listSizes {
		fmt.Fprintf(os.Stderr, "preloading %d tasks\n", n)
		owner := fmt.Sprintf("bench-agent/lister%d", n) // "<owner_scope>/<principal>": the scope defaults to the card name
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for w := 0; w < 64; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; i < n; i += 64 {
					text := "hello"
					t := &a2a.Task{ID: fmt.Sprintf("%s-%08d", owner, i), ContextID: fmt.Sprintf("ctx-%d", i%1000),
						Status:  a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.Timestamp(base.Add(time.Duration(i) * time.Millisecond))},
						History: []a2a.Message{{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}}
					if err := st.PutTask(context.Background(), owner, t); err != nil {
						errs <- err
						return
					}
				}
			}(w)
		}
		wg.Wait()
		select {
		case err := <-errs:
			return err
		default:
		}
	}
	return nil
}

func rpcBody(method string, params any) []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return b
}

func sendParams(text, contextID string) map[string]any {
	msg := map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	if contextID != "" {
		msg["contextId"] = contextID
	}
	return map[string]any{"message": msg}
}

func post(c *http.Client, url, token string, body []byte) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return c.Do(req)
}

// expect posts and checks that the body contains want.
func expect(c *http.Client, url, token string, body []byte, want string) error {
	resp, err := post(c, url, token, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 || !bytes.Contains(b, []byte(want)) {
		return fmt.Errorf("unexpected response %d: %.200s", resp.StatusCode, b)
	}
	return nil
}

func (r *runner) baselines() []result {
	body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
	a := drive("baseline: Caddy respond", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		return expect(c, r.respond+"/", "", body, "INPUT_REQUIRED")
	})
	b := drive("baseline: bare net/http", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		return expect(c, r.bare+"/", "", body, "INPUT_REQUIRED")
	})
	return []result{a, b}
}

func (r *runner) sendMessage() []result {
	body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
	res := drive("SendMessage (echo, durable store, auth)", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		return expect(c, r.fast+"/", benchToken, body, "TASK_STATE_INPUT_REQUIRED")
	})
	res.ratioTo = []string{"baseline: Caddy respond", "baseline: bare net/http"}
	return []result{res}
}

func (r *runner) streamMessage() []result {
	body := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
	var mu sync.Mutex
	events := 0
	res := drive("SendStreamingMessage (streams)", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		resp, err := post(c, r.fast+"/", benchToken, body)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		n := 0
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		last := ""
		for sc.Scan() {
			if line := sc.Text(); strings.HasPrefix(line, "data: ") {
				n++
				last = line
			}
		}
		if !strings.Contains(last, "TASK_STATE_INPUT_REQUIRED") {
			return fmt.Errorf("stream did not end input-required")
		}
		mu.Lock()
		events += n
		mu.Unlock()
		return nil
	})
	res.extra = fmt.Sprintf("%.0f events/s", float64(events)/res.elapsed.Seconds())
	res.ratioTo = []string{"baseline: Caddy respond"}
	return []result{res}
}

func (r *runner) card() []result {
	c := newClient(1)
	resp, err := c.Get(r.fast + "/.well-known/agent-card.json")
	if err != nil {
		return []result{{name: "card", extra: "error: " + err.Error()}}
	}
	etag := resp.Header.Get("ETag")
	resp.Body.Close()
	get := func(inm string) func(c *http.Client, _, _ int) error {
		return func(c *http.Client, _, _ int) error {
			req, _ := http.NewRequest(http.MethodGet, r.fast+"/.well-known/agent-card.json", nil)
			if inm != "" {
				req.Header.Set("If-None-Match", inm)
			}
			resp, err := c.Do(req)
			if err != nil {
				return err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			want := 200
			if inm != "" {
				want = 304
			}
			if resp.StatusCode != want {
				return fmt.Errorf("status %d", resp.StatusCode)
			}
			return nil
		}
	}
	full := drive("card GET (200)", r.concurrency, r.duration, get(""))
	full.ratioTo = []string{"baseline: Caddy respond"}
	cond := drive("card GET If-None-Match (304)", r.concurrency, r.duration, get(etag))
	cond.ratioTo = []string{"baseline: Caddy respond"}
	return []result{full, cond}
}

func (r *runner) getTask() []result {
	c := newClient(1)
	resp, err := post(c, r.fast+"/", benchToken, rpcBody("SendMessage", sendParams("seed", "")))
	if err != nil {
		return []result{{name: "GetTask", extra: "error: " + err.Error()}}
	}
	var out struct {
		Result a2a.SendMessageResponse `json:"result"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if out.Result.Task == nil {
		return []result{{name: "GetTask", extra: "error: no task"}}
	}
	body := rpcBody("GetTask", map[string]any{"id": out.Result.Task.ID})
	res := drive("GetTask", r.concurrency, r.duration, func(c *http.Client, _, _ int) error {
		return expect(c, r.fast+"/", benchToken, body, out.Result.Task.ID)
	})
	res.ratioTo = []string{"baseline: Caddy respond"}
	return []result{res}
}

func (r *runner) listTasks() []result {
	var out []result
	body := rpcBody("ListTasks", map[string]any{"pageSize": 50, "historyLength": 0})
	for _, n := range r.listSizes {
		token := fmt.Sprintf("tok-%d", n)
		res := drive(fmt.Sprintf("ListTasks page of 50 (%d tasks)", n), 4, r.duration, func(c *http.Client, _, _ int) error {
			return expect(c, r.fast+"/", token, body, `"nextPageToken":"`)
		})
		out = append(out, res)
	}
	return out
}

// idleContexts opens many contexts (one short turn each) and reports the
// gateway's resident memory per context once they sit idle.
func (r *runner) idleContexts(g *gateway) []result {
	const n = 20000
	runtime.GC()
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
	time.Sleep(2 * time.Second)
	after := g.rssBytes()
	per := float64(after-before) / float64(n)
	return []result{{name: fmt.Sprintf("idle contexts (%d)", n), requests: n - errs, errors: errs, elapsed: time.Since(start),
		extra: fmt.Sprintf("RSS %+.1f MiB, %.0f B/context (RSS, includes store cache)", float64(after-before)/(1<<20), per)}}
}

// idleStreamsScenario holds many SSE streams open on long turns and
// reports the gateway's resident memory.
func (r *runner) idleStreamsScenario(g *gateway) []result {
	n := r.idleStreams
	before := g.rssBytes()
	start := time.Now()
	body := rpcBody("SendStreamingMessage", sendParams("wait", ""))
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
	time.Sleep(time.Second)
	after := g.rssBytes()
	return []result{{name: fmt.Sprintf("idle SSE streams (%d on running turns)", n), requests: open, errors: errs + len(conns) - open, elapsed: time.Since(start),
		extra: fmt.Sprintf("gateway RSS %.0f MiB (+%.0f MiB, %.1f KiB/stream incl. its turn), %d goroutines", float64(after)/(1<<20), float64(after-before)/(1<<20), float64(after-before)/1024/float64(max(open, 1)), r.goroutines())}}
}

// startBareBaseline serves a bare net/http handler that decodes a
// SendMessage request and encodes a Task: the floor of any A2A server.
func startBareBaseline() (func(), string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env struct {
			ID     json.RawMessage        `json:"id"`
			Params a2a.SendMessageRequest `json:"params"`
		}
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&env); err != nil || env.Params.Message == nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		t := a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.Timestamp(time.Now())},
			History: []a2a.Message{*env.Params.Message}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": map[string]any{"task": t}})
	})}
	go func() { _ = srv.Serve(l) }()
	return func() { _ = srv.Close() }, "http://" + l.Addr().String(), nil
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
