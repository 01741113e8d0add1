package tests

// Readiness (OPS-8): GET /health stays a cheap liveness answer; GET
// /health?ready=1 answers 503 naming the store within a second of Redis
// stopping and 200 again once it is back, and 200 on a SQLite gateway.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// probe GETs url and returns the status and the body.
func probe(t *testing.T, url string) (int, string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("GET %s: Content-Type %q", url, ct)
	}
	return resp.StatusCode, string(b)
}

// waitReady polls url until it answers 200 (the a2a app may still be
// opening its store when the HTTP server already answers liveness).
func waitReady(t *testing.T, url string, within time.Duration) (int, string) {
	t.Helper()
	start := time.Now()
	for {
		code, body := probe(t, url)
		if code == http.StatusOK || time.Since(start) > within {
			return code, body
		}
		if code != http.StatusServiceUnavailable {
			t.Fatalf("readiness: %d %s", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readyChecks decodes a readiness body and checks its shape.
func readyChecks(t *testing.T, body string) (string, map[string]map[string]any) {
	t.Helper()
	var v struct {
		Status string                    `json:"status"`
		Checks map[string]map[string]any `json:"checks"`
	}
	if err := json.Unmarshal([]byte(body), &v); err != nil || v.Checks["store"] == nil {
		t.Fatalf("readiness body %q: %v", body, err)
	}
	return v.Status, v.Checks
}

// TestReadinessSQLite: a SQLite gateway is ready, and liveness keeps its
// answer.
func TestReadinessSQLite(t *testing.T) {
	t.Parallel()
	g := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname ready-sqlite\n\t}\n\tbackend echo\n}")
	code, body := waitReady(t, g.URL+"/health?ready=1", 10*time.Second)
	if want := `{"status":"ready","checks":{"store":{"ok":true}}}`; code != http.StatusOK || body != want {
		t.Fatalf("readiness: %d %s, want 200 %s", code, body, want)
	}
	if code, body := probe(t, g.URL+"/health"); code != http.StatusOK || body != `{"status":"healthy"}` {
		t.Fatalf("liveness: %d %s", code, body)
	}
}

// TestReadinessRedisOutage: kill redis-server under a `store redis`
// gateway with a redis-streams push queue; readiness goes 503 naming the
// store within a second and back to 200 when Redis restarts on its port;
// liveness answers 200 throughout.
func TestReadinessRedisOutage(t *testing.T) {
	r := startPersistentRedis(t)
	site := "a2a {\n\tcard {\n\t\tname ready-redis\n\t}\n\tbackend echo\n\tpush {\n\t\tqueue redis-streams {\n\t\t\tredis_url redis://" + r.Addr + "/0\n\t\t}\n\t}\n}"
	gw := harness.StartRedisGateways(t, r.Addr, 1, site, harness.Options{})[0]
	ready := gw.URL + "/health?ready=1"

	code, body := waitReady(t, ready, 10*time.Second)
	if status, checks := readyChecks(t, body); code != http.StatusOK || status != "ready" ||
		checks["push_queue"]["ok"] != true || checks["instance_lease"]["ok"] != true {
		t.Fatalf("readiness before the outage: %d %s", code, body)
	}

	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	<-r.done
	r.cmd = nil
	killed := time.Now()
	for {
		code, body = probe(t, ready)
		if code == http.StatusServiceUnavailable {
			break
		}
		if time.Since(killed) > time.Second {
			t.Fatalf("readiness %v after Redis was killed: %d %s", time.Since(killed), code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(killed)
	t.Logf("readiness 503 %v after Redis was killed: %s", took, body)
	status, checks := readyChecks(t, body)
	if status != "unready" || checks["store"]["ok"] != false || !strings.HasPrefix(checks["store"]["reason"].(string), "redis: ") {
		t.Fatalf("readiness body during the outage: %s", body)
	}
	if strings.Contains(body, r.Addr) || strings.Contains(body, gw.Dir) {
		t.Fatalf("readiness body leaks an address or a path: %s", body)
	}
	if code, body := probe(t, gw.URL+"/health"); code != http.StatusOK || body != `{"status":"healthy"}` {
		t.Fatalf("liveness during the outage: %d %s", code, body)
	}

	r.Start()
	back := time.Now()
	if code, body = waitReady(t, ready, 10*time.Second); code != http.StatusOK {
		t.Fatalf("readiness still %d %v after Redis came back: %s", code, time.Since(back), body)
	}
	t.Logf("readiness 200 %v after Redis came back", time.Since(back))
	if status, _ := readyChecks(t, body); status != "ready" {
		t.Fatalf("readiness after the outage: %s", body)
	}
	if code, body := probe(t, gw.URL+"/health"); code != http.StatusOK || body != `{"status":"healthy"}` {
		t.Fatalf("liveness after the outage: %d %s", code, body)
	}
}

// TestReadinessBalancerKill: two gateways on one Redis behind the
// documented balancer; kill -9 one, and every one of the next calls
// through the balancer succeeds (a dead upstream costs a retry, not an
// error).
func TestReadinessBalancerKill(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	site := "a2a {\n\tcard {\n\t\tname balanced-ready\n\t}\n\tbackend echo\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	for _, g := range gws {
		if code, body := waitReady(t, g.URL+"/health?ready=1", 10*time.Second); code != http.StatusOK {
			t.Fatalf("gateway not ready: %d %s", code, body)
		}
	}
	lb := harness.StartGatewayWith(t, balancerSite(gws[0].Addr, gws[1].Addr), harness.Options{})
	send := func(i int) (int, map[string]any, map[string]any, string) {
		r := harness.At(lb.URL).Call(t, "SendMessage", map[string]any{"message": scaleMsg(fmt.Sprint("call ", i), "", "")})
		return r.StatusCode, r.Result, r.Error, string(r.Raw)
	}
	deadline := time.Now().Add(10 * time.Second)
	for i := 0; ; i++ { // the balancer is up and both upstreams answer
		if code, res, _, _ := send(i); code == http.StatusOK && res != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the balancer did not answer")
		}
		time.Sleep(100 * time.Millisecond)
	}
	gws[0].Kill()
	const n = 8
	for i := range n {
		code, res, rpcErr, raw := send(100 + i)
		if code != http.StatusOK || res == nil || rpcErr != nil {
			t.Fatalf("call %d of %d after kill -9 of one gateway: %d %s", i+1, n, code, raw)
		}
	}
}
