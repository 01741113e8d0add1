package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const (
	rrpcRequests = "iac-code:a2a:requests"
	rrpcPrefix   = "iac-code:a2a:responses"
	rrpcGroup    = "iac-code"
)

// rrpcClient is a go-redis client of a test's redis-server.
func rrpcClient(t *testing.T, addr string) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// rrpcSite is an a2a site with a redis_rpc block on addr; extra goes
// into the a2a block (backend, auth), claim is claim_after.
func rrpcSite(addr, claim, extra string) string {
	return `a2a {
	card {
		name rrpc
	}
	` + extra + `
	redis_rpc {
		url redis://` + addr + `/0
		claim_after ` + claim + `
	}
}`
}

// rrpcSend adds a SendMessage request entry and returns its correlation id.
func rrpcSend(t *testing.T, rdb *redis.Client, corr, reply, text string, headers map[string]string) {
	t.Helper()
	payload := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":%q,"parts":[{"text":%q}]}}}`, corr, corr, text)
	vals := []any{"correlation_id", corr, "reply_stream", reply, "payload", payload}
	if headers != nil {
		b, _ := json.Marshal(headers)
		vals = append(vals, "headers", string(b))
	}
	if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: rrpcRequests, Values: vals}).Err(); err != nil {
		t.Fatal(err)
	}
}

// rrpcEntry is one response entry.
type rrpcEntry struct {
	Corr, Payload, Final string
}

// rrpcRead reads every entry of a reply stream until want final entries
// arrived or d passed.
func rrpcRead(t *testing.T, rdb *redis.Client, stream string, want int, d time.Duration) []rrpcEntry {
	t.Helper()
	var out []rrpcEntry
	last, finals := "0", 0
	for deadline := time.Now().Add(d); finals < want && time.Now().Before(deadline); {
		res, err := rdb.XRead(t.Context(), &redis.XReadArgs{Streams: []string{stream, last}, Block: 200 * time.Millisecond}).Result()
		if err == redis.Nil {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range res[0].Messages {
			last = m.ID
			e := rrpcEntry{}
			e.Corr, _ = m.Values["correlation_id"].(string)
			e.Payload, _ = m.Values["payload"].(string)
			e.Final, _ = m.Values["final"].(string)
			if e.Final == "true" {
				finals++
			}
			out = append(out, e)
		}
	}
	return out
}

// rrpcPending is the number of requests pending in the group (-1 when
// the group does not exist yet).
func rrpcPending(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	p, err := rdb.XPending(t.Context(), rrpcRequests, rrpcGroup).Result()
	if err != nil {
		return -1
	}
	return p.Count
}

// rrpcTaskID is the task id of a SendMessage response payload.
func rrpcTaskID(t *testing.T, payload string) string {
	t.Helper()
	var r struct {
		Result struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		} `json:"result"`
		Error any `json:"error"`
	}
	if err := json.Unmarshal([]byte(payload), &r); err != nil || r.Error != nil || r.Result.Task.ID == "" {
		t.Fatalf("not a SendMessage result: %s", payload)
	}
	return r.Result.Task.ID
}

// hasTask reports whether gateway url stores task id (anonymous caller).
func hasTask(t *testing.T, url, id string) bool {
	t.Helper()
	res, rpcErr := harness.At(url).RPC(t, "GetTask", map[string]any{"id": id})
	return rpcErr == nil && res != nil
}

// TestRedisRPCTwoGatewaysShare: XPORT-5 — two gateway processes in one
// consumer group share the request stream: every request is answered
// exactly once, and each gateway served some (its task store holds them).
func TestRedisRPCTwoGatewaysShare(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	// max_in_flight 4 and 100ms turns: one gateway cannot take the whole
	// burst, however late the other starts reading.
	site := strings.Replace(rrpcSite(addr, "30s", "backend echo {\n\t\tdelay 100ms\n\t}"), "claim_after 30s", "claim_after 30s\n\t\tmax_in_flight 4", 1)
	a := harness.StartGateway(t, site)
	b := harness.StartGateway(t, site)
	const n = 40
	reply := rrpcPrefix + ":share"
	for i := range n {
		rrpcSend(t, rdb, fmt.Sprint("c", i), reply, "hi", nil)
	}
	got := rrpcRead(t, rdb, reply, n, 30*time.Second)
	per := map[string]int{}
	onA, onB := 0, 0
	for _, e := range got {
		if e.Final != "true" {
			t.Fatalf("unary answer not final: %+v", e)
		}
		per[e.Corr]++
		id := rrpcTaskID(t, e.Payload)
		inA, inB := hasTask(t, a.URL, id), hasTask(t, b.URL, id)
		if inA == inB {
			t.Fatalf("task %s: on A %v, on B %v; want exactly one", id, inA, inB)
		}
		if inA {
			onA++
		} else {
			onB++
		}
	}
	if len(per) != n {
		t.Fatalf("%d of %d requests answered", len(per), n)
	}
	for c, k := range per {
		if k != 1 {
			t.Fatalf("%s answered %d times", c, k)
		}
	}
	t.Logf("gateway A served %d, gateway B %d of %d requests", onA, onB, n)
	if onA == 0 || onB == 0 {
		t.Fatalf("the work was not shared: A %d, B %d", onA, onB)
	}
	if p := rrpcPending(t, rdb); p != 0 {
		t.Fatalf("%d requests left pending", p)
	}
}

// TestRedisRPCKilledConsumerReclaimed: XPORT-5 — a gateway killed with
// SIGKILL while serving a request leaves it pending; another gateway
// re-claims it after claim_after and answers it exactly once.
func TestRedisRPCKilledConsumerReclaimed(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	site := rrpcSite(addr, "2s", "backend echo {\n\t\tchunks 10\n\t\tdelay 1s\n\t}")
	a := harness.StartGateway(t, site)
	reply := rrpcPrefix + ":reclaim"
	rrpcSend(t, rdb, "victim", reply, "slow", nil)
	deadline := time.Now().Add(10 * time.Second)
	for rrpcPending(t, rdb) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("gateway A never took the request\n%s", a.Output())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The turn is running on A (its task is WORKING there) when A dies.
	if !waitFor(t, 10*time.Second, func() bool {
		res, rerr := harness.At(a.URL).RPC(t, "ListTasks", map[string]any{"status": "TASK_STATE_WORKING"})
		tasks, _ := res["tasks"].([]any)
		return rerr == nil && len(tasks) == 1
	}) {
		t.Fatalf("the taken request never started a turn on A\n%s", a.Output())
	}
	a.Kill()
	killed := time.Now()
	if n := rdb.XLen(t.Context(), reply).Val(); n != 0 {
		t.Fatalf("A answered before the kill (%d entries): the test proves nothing", n)
	}
	// B uses a short turn so the re-run ends fast.
	harness.StartGateway(t, rrpcSite(addr, "2s", "backend echo"))
	got := rrpcRead(t, rdb, reply, 1, 30*time.Second)
	if len(got) != 1 || got[0].Corr != "victim" || got[0].Final != "true" {
		t.Fatalf("answers after the kill: %+v", got)
	}
	rrpcTaskID(t, got[0].Payload)
	t.Logf("re-claimed and answered %v after SIGKILL (claim_after 2s)", time.Since(killed).Round(100*time.Millisecond))
	time.Sleep(3 * time.Second) // sleep: one more claim pass (claim_after 2s) must find nothing
	if n := rdb.XLen(t.Context(), reply).Val(); n != 1 {
		t.Fatalf("%d answers for the killed request, want exactly one", n)
	}
	if p := rrpcPending(t, rdb); p != 0 {
		t.Fatalf("%d requests left pending", p)
	}
}

// TestRedisRPCForeignReply: XPORT-5 — a request naming a reply stream
// outside response_prefix is acknowledged and never answered; nothing is
// written to that key.
func TestRedisRPCForeignReply(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	gw := harness.StartGateway(t, rrpcSite(addr, "30s", "backend echo"))
	for _, s := range []string{"victim:inbox", rrpcPrefix + "-evil", rrpcRequests} {
		rrpcSend(t, rdb, "f", s, "x", nil)
	}
	rrpcSend(t, rdb, "ok", rrpcPrefix, "fine", nil)
	got := rrpcRead(t, rdb, rrpcPrefix, 1, 15*time.Second)
	if len(got) != 1 || got[0].Corr != "ok" {
		t.Fatalf("answers %+v", got)
	}
	for _, s := range []string{"victim:inbox", rrpcPrefix + "-evil"} {
		if rdb.Exists(t.Context(), s).Val() != 0 {
			t.Fatalf("%s was written to", s)
		}
	}
	// The refusals run concurrently with the valid request: wait for them.
	for deadline := time.Now().Add(5 * time.Second); rdb.XLen(t.Context(), rrpcRequests).Val() != 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := rdb.XLen(t.Context(), rrpcRequests).Val(); n != 0 {
		t.Fatalf("%d entries left in the request stream (a reply was written there, or a refusal not acknowledged)", n)
	}
	if !strings.Contains(gw.Output(), "reply_stream outside response_prefix") {
		t.Fatalf("refusal not logged:\n%s", gw.Output())
	}
	if strings.Contains(gw.Output(), `\"text\":\"x\"`) || strings.Contains(gw.Output(), "SendMessage") {
		t.Fatalf("the refused payload was logged")
	}
}

// TestRedisRPCAuth: XPORT-5 — on a site with auth, a request without
// credentials or with a wrong token gets a -31401 error entry, and
// headers.authorization with the site's token is served.
func TestRedisRPCAuth(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	harness.StartGateway(t, rrpcSite(addr, "30s", "backend echo\n\tauth {\n\t\tno_env\n\t\tbearer s3cret\n\t}"))
	cases := []struct {
		name    string
		headers map[string]string
		ok      bool
	}{
		{"none", nil, false},
		{"wrong", map[string]string{"authorization": "Bearer nope"}, false},
		{"right", map[string]string{"authorization": "Bearer s3cret"}, true},
	}
	for _, tc := range cases {
		reply := rrpcPrefix + ":" + tc.name
		rrpcSend(t, rdb, tc.name, reply, "hello", tc.headers)
		got := rrpcRead(t, rdb, reply, 1, 15*time.Second)
		if len(got) != 1 {
			t.Fatalf("%s: %d answers", tc.name, len(got))
		}
		var r struct {
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(got[0].Payload), &r)
		if tc.ok && (r.Error != nil || !strings.Contains(string(r.Result), "Echo: hello")) {
			t.Fatalf("%s: %s", tc.name, got[0].Payload)
		}
		if !tc.ok && (r.Error == nil || r.Error.Code != -31401 || r.Result != nil) {
			t.Fatalf("%s: %s, want -31401", tc.name, got[0].Payload)
		}
	}
}

// TestRedisRPCReload: XPORT-5 — after a config reload the new consumer
// serves requests (exactly once), and after a stop nothing more is read.
func TestRedisRPCReload(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	gw := harness.StartGatewayWith(t, rrpcSite(addr, "30s", "backend echo"), harness.Options{Admin: true})
	reply := rrpcPrefix + ":reload"
	rrpcSend(t, rdb, "before", reply, "one", nil)
	if got := rrpcRead(t, rdb, reply, 1, 15*time.Second); len(got) != 1 {
		t.Fatalf("before the reload: %+v", got)
	}
	gw.Reload(rrpcSite(addr, "30s", "backend echo {\n\t\tchunks 2\n\t}"))
	rrpcSend(t, rdb, "after", reply, "two", nil)
	got := rrpcRead(t, rdb, reply, 2, 15*time.Second)
	if len(got) != 2 || got[1].Corr != "after" {
		t.Fatalf("after the reload: %+v", got)
	}
	if n := rdb.XInfoConsumers(context.Background(), rrpcRequests, rrpcGroup).Val(); len(n) != 1 {
		t.Fatalf("%d consumers in the group, want 1 (same name across the reload)", len(n))
	}
	time.Sleep(time.Second) // sleep: room for a duplicate answer, which must not come
	if n := rdb.XLen(t.Context(), reply).Val(); n != 2 {
		t.Fatalf("%d answers, want 2 (one per request)", n)
	}
	gw.Stop()
	rrpcSend(t, rdb, "stopped", reply, "three", nil)
	time.Sleep(1500 * time.Millisecond) // sleep: a stopped gateway must not read the request
	if n := rdb.XLen(t.Context(), rrpcRequests).Val(); n != 1 {
		t.Fatalf("a stopped gateway still read requests (%d left)", n)
	}
}

// TestRedisRPCGlobalBlock: XPORT-5, Appendix B.1 — redis_rpc in the
// global a2a block serves the config's only a2a handler, with the
// configured streams and group, and that site's auth.
func TestRedisRPCGlobalBlock(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	global := "a2a {\n\tredis_rpc {\n\t\turl redis://" + addr + "/0\n\t\trequest_stream app:req\n\t\tresponse_prefix app:resp\n\t\tgroup apps\n\t}\n}"
	harness.StartGatewayWith(t, "a2a {\n\tcard {\n\t\tname global\n\t}\n\tauth {\n\t\tno_env\n\t\tbearer tok\n\t}\n}", harness.Options{Global: global})
	payload := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"g1","parts":[{"text":"global"}]}}}`
	for _, h := range []string{`{"authorization":"Bearer tok"}`, `{}`} {
		if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: "app:req", Values: []any{
			"correlation_id", h, "reply_stream", "app:resp:me", "payload", payload, "headers", h,
		}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	got := rrpcRead(t, rdb, "app:resp:me", 2, 15*time.Second)
	if len(got) != 2 {
		t.Fatalf("answers %+v", got)
	}
	for _, e := range got {
		authed := strings.Contains(e.Corr, "tok")
		if authed != strings.Contains(e.Payload, "Echo: global") || authed == strings.Contains(e.Payload, "-31401") {
			t.Fatalf("%s: %s", e.Corr, e.Payload)
		}
	}
	if g := rdb.XInfoGroups(t.Context(), "app:req").Val(); len(g) != 1 || g[0].Name != "apps" {
		t.Fatalf("groups %+v", g)
	}
}

// TestRedisRPCShutdownLeavesPending: XPORT-5, OPS-3 — a gateway stopped
// (SIGINT) while a request runs past shutdown_timeout exits promptly,
// writes no answer for it and leaves it pending; another gateway
// re-claims it and answers it once.
func TestRedisRPCShutdownLeavesPending(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	rdb := rrpcClient(t, addr)
	a := harness.StartGatewayWith(t, rrpcSite(addr, "2s", "backend echo {\n\t\tchunks 20\n\t\tdelay 1s\n\t}"),
		harness.Options{Global: "a2a {\n\tshutdown_timeout 1s\n}"})
	reply := rrpcPrefix + ":shutdown"
	rrpcSend(t, rdb, "cut", reply, "long", nil)
	for deadline := time.Now().Add(10 * time.Second); rrpcPending(t, rdb) != 1; {
		if time.Now().After(deadline) {
			t.Fatal("gateway A never took the request")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	if !a.StopWithin(15 * time.Second) {
		t.Fatal("gateway did not exit after SIGINT")
	}
	t.Logf("gateway exited %v after SIGINT with a request in flight", time.Since(start).Round(100*time.Millisecond))
	if n := rdb.XLen(t.Context(), reply).Val(); n != 0 {
		t.Fatalf("%d answers written for an unfinished request", n)
	}
	if p := rrpcPending(t, rdb); p != 1 {
		t.Fatalf("%d pending after the stop, want 1 (not acknowledged)", p)
	}
	harness.StartGateway(t, rrpcSite(addr, "2s", "backend echo"))
	got := rrpcRead(t, rdb, reply, 1, 30*time.Second)
	if len(got) != 1 || got[0].Corr != "cut" {
		t.Fatalf("answers after the restart: %+v", got)
	}
	rrpcTaskID(t, got[0].Payload)
}
