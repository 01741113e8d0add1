package tests

// TURN-10 on every carrier and AUTH-10 across the agents of a site
// (issues 25, 26): the tenant of a gRPC request, a WebSocket frame or a
// Redis Streams entry selects the agent exactly as on HTTP JSON-RPC, only
// an agent whose auth the request passed; limits reach the agents that
// inherit the site's auth, with one rate per principal; the tenant
// pre-read of a2a_tenants holds little, for little time.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const (
	mcAlice = "alice-token-0123456789"
	mcMon   = "mon-token-0123456789"
	mcOps   = "ops-token-0123456789"
	mcOwn   = "own-token-0123456789"
)

// mcRootLimits are the root agent's limits: mon may only read tasks, ops
// sends at 2/s.
const mcRootLimits = `limits mon {
		allow_methods GetTask ListTasks
	}
	limits ops {
		rate 2/s burst 2
	}`

// mcStart starts a site with a root agent, "shell" (inherits the root's
// auth and limits) and "own" (its own auth), gRPC on all three, WebSocket
// and Redis Streams on the root.
func mcStart(t *testing.T, redisAddr string) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, `a2a {
	card {
		name site-root
	}
	auth {
		principal alice bearer `+mcAlice+`
		principal mon bearer `+mcMon+`
		principal ops bearer `+mcOps+`
	}
	`+mcRootLimits+`
	grpc
	websocket
	redis_rpc {
		url redis://`+redisAddr+`/0
	}
	agent shell {
		card {
			name shell-agent
		}
		grpc
		websocket
	}
	agent calc {
		card {
			name calc-agent
		}
	}
	agent own {
		card {
			name own-agent
		}
		auth {
			bearer `+mcOwn+`
		}
		grpc
	}
}`, harness.Options{
		Global:       "servers {\n\tprotocols h1 h2c\n}",
		Admin:        true,
		ReadyPath:    "/.well-known/agent-card.json",
		StartTimeout: 30 * time.Second,
	})
}

// mcHas reports whether the agent at url holds task id for token.
func mcHas(t *testing.T, url, token, id string) bool {
	t.Helper()
	res, rerr := harness.At(url, harness.Bearer(token)).RPC(t, "GetTask", map[string]any{"id": id})
	return rerr == nil && res != nil
}

// mcGRPC is a gRPC client of gw with token's credentials.
func mcGRPC(t *testing.T, gw *harness.Gateway, token string) (pb.A2AServiceClient, context.Context) {
	t.Helper()
	c := grpcRawClient(t, strings.TrimPrefix(gw.URL, "http://"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c, metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token, "a2a-version", "1.0")
}

func mcPBMessage(text string) *pb.Message {
	return &pb.Message{MessageId: fmt.Sprintf("m-%d", time.Now().UnixNano()), Role: pb.Role_ROLE_USER,
		Parts: []*pb.Part{{Content: &pb.Part_Text{Text: text}}}}
}

func TestMultiAgentTenantCarriers(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	gw := mcStart(t, addr)
	root, shell := gw.URL+"/", gw.URL+"/shell/"

	t.Run("grpc", func(t *testing.T) {
		c, ctx := mcGRPC(t, gw, mcAlice)
		resp, err := c.SendMessage(ctx, &pb.SendMessageRequest{Tenant: "shell", Message: mcPBMessage("to shell over grpc")})
		if err != nil {
			t.Fatalf("SendMessage tenant shell: %v", err)
		}
		id := resp.GetTask().GetId()
		if id == "" || !mcHas(t, shell, mcAlice, id) || mcHas(t, root, mcAlice, id) {
			t.Fatalf("task %q: want it in shell only", id)
		}
		if _, err := c.GetTask(ctx, &pb.GetTaskRequest{Tenant: "shell", Id: id}); err != nil {
			t.Errorf("GetTask tenant shell: %v", err)
		}
		for _, tn := range []string{"", "nope", "llm"} {
			_, err := c.GetTask(ctx, &pb.GetTaskRequest{Tenant: tn, Id: id})
			if status.Code(err) != codes.NotFound {
				t.Errorf("GetTask tenant %q of shell's task: %v, want NOT_FOUND", tn, err)
			}
		}
		// "own" has its own auth: alice's call never reaches it.
		_, err = c.SendMessage(ctx, &pb.SendMessageRequest{Tenant: "own", Message: mcPBMessage("x")})
		if code := status.Code(err); code != codes.Unauthenticated && code != codes.NotFound {
			t.Errorf("SendMessage tenant own with alice's token: %v, want UNAUTHENTICATED", err)
		}
		oc, octx := mcGRPC(t, gw, mcOwn)
		if _, err := oc.ListTasks(octx, &pb.ListTasksRequest{Tenant: "own"}); err != nil {
			t.Errorf("ListTasks tenant own with own's token: %v", err)
		}
	})

	t.Run("websocket", func(t *testing.T) {
		hdr := http.Header{"Authorization": {"Bearer " + mcAlice}, "A2a-Version": {"1.0"}}
		w := dialWS(t, wsURL(gw.URL, "/ws"), hdr, nil)
		p := wsMessage("to shell over ws")
		p["tenant"] = "shell"
		w.request("s1", "SendMessage", p, nil)
		id := mcTaskOf(t, w.waitFinal(`"s1"`, 20*time.Second))
		if !mcHas(t, shell, mcAlice, id) || mcHas(t, root, mcAlice, id) {
			t.Fatalf("task %q: want it in shell only", id)
		}
		w.request("g1", "GetTask", map[string]any{"tenant": "shell", "id": id}, nil)
		if f := w.waitFinal(`"g1"`, 10*time.Second); f[len(f)-1].Payload.Error != nil {
			t.Errorf("GetTask tenant shell: %s", f[len(f)-1].raw)
		}
		// Only the root's carrier routes: on shell's own connection,
		// calc's tenant (same auth) is not calc's data.
		calcTask := maSendAuth(t, gw.URL+"/calc/", mcAlice)
		ws2 := dialWS(t, wsURL(gw.URL, "/shell/ws"), hdr, nil)
		ws2.request("c1", "GetTask", map[string]any{"tenant": "calc", "id": calcTask}, nil)
		if f := ws2.waitFinal(`"c1"`, 10*time.Second); f[len(f)-1].Payload.Error == nil || f[len(f)-1].Payload.Error.Code != -32001 {
			t.Errorf("GetTask tenant calc on /shell/ws: %s, want TaskNotFoundError", f[len(f)-1].raw)
		}
		w.request("c2", "GetTask", map[string]any{"tenant": "calc", "id": calcTask}, nil)
		if f := w.waitFinal(`"c2"`, 10*time.Second); f[len(f)-1].Payload.Error != nil {
			t.Errorf("GetTask tenant calc on the root's /ws: %s", f[len(f)-1].raw)
		}
		for i, tn := range []string{"nope", "own", ""} {
			fid := fmt.Sprintf(`"n%d"`, i)
			w.request(strings.Trim(fid, `"`), "GetTask", map[string]any{"tenant": tn, "id": id}, nil)
			f := w.waitFinal(fid, 10*time.Second)
			if e := f[len(f)-1].Payload.Error; e == nil || e.Code != -32001 {
				t.Errorf("GetTask tenant %q of shell's task: %s, want TaskNotFoundError", tn, f[len(f)-1].raw)
			}
		}
	})

	t.Run("redis-streams", func(t *testing.T) {
		rdb := rrpcClient(t, addr)
		reply := "iac-code:a2a:responses:mc"
		send := func(corr, params string) {
			payload := fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%s}`, corr, params)
			hb, _ := json.Marshal(map[string]string{"authorization": "Bearer " + mcAlice})
			if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: rrpcRequests, Values: []any{
				"correlation_id", corr, "reply_stream", reply, "payload", payload, "headers", string(hb),
			}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		send("r1", `"SendMessage","params":{"tenant":"shell","message":{"role":"ROLE_USER","messageId":"mc-r1","parts":[{"text":"to shell over redis"}]}}`)
		es := rrpcRead(t, rdb, reply, 1, 20*time.Second)
		if len(es) == 0 {
			t.Fatal("no answer on the reply stream")
		}
		id := rrpcTaskID(t, es[len(es)-1].Payload)
		if !mcHas(t, shell, mcAlice, id) || mcHas(t, root, mcAlice, id) {
			t.Fatalf("task %q: want it in shell only", id)
		}
		send("r2", fmt.Sprintf(`"GetTask","params":{"tenant":"own","id":%q}`, id))
		es = rrpcRead(t, rdb, reply, 2, 20*time.Second)
		if last := es[len(es)-1]; !strings.Contains(last.Payload, "-32001") {
			t.Errorf("GetTask tenant own over redis: %s, want TaskNotFoundError", last.Payload)
		}
	})
}

// mcTaskOf returns the task id of a SendMessage answer's frames.
func mcTaskOf(t *testing.T, frames []wsFrame) string {
	t.Helper()
	last := frames[len(frames)-1]
	var r struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if last.Payload == nil || last.Payload.Error != nil || json.Unmarshal(last.Payload.Result, &r) != nil || r.Task.ID == "" {
		t.Fatalf("not a SendMessage result: %s", last.raw)
	}
	return r.Task.ID
}

// AUTH-10: a principal read-only at the root is read-only on the agents
// that inherit the root's auth, by path and by tenant, on JSON-RPC and
// gRPC; a rate is counted once per principal across the site.
func TestMultiAgentLimitsInherited(t *testing.T) {
	t.Parallel()
	gw := mcStart(t, harness.StartRedis(t))
	root, shell := gw.URL+"/", gw.URL+"/shell/"
	msg := map[string]any{"message": bkMessage("may I?", "", nil)}

	for _, tc := range []struct {
		name, url string
		params    map[string]any
	}{
		{"POST /shell/", shell, msg},
		{"POST / tenant shell", root, map[string]any{"message": bkMessage("may I?", "", nil), "tenant": "shell"}},
		{"POST /", root, msg},
	} {
		r := harness.At(tc.url, harness.Bearer(mcMon)).Call(t, "SendMessage", tc.params)
		if r.StatusCode != http.StatusForbidden || r.Error == nil || r.Error["code"] != float64(-32050) {
			t.Errorf("%s: mon SendMessage: HTTP %d %s, want 403 PERMISSION_DENIED", tc.name, r.StatusCode, r.Raw)
		}
	}
	if r := harness.At(shell, harness.Bearer(mcMon)).Call(t, "ListTasks", map[string]any{}); r.StatusCode != http.StatusOK {
		t.Errorf("mon ListTasks on /shell/: HTTP %d %s", r.StatusCode, r.Raw)
	}
	c, ctx := mcGRPC(t, gw, mcMon)
	if _, err := c.SendMessage(ctx, &pb.SendMessageRequest{Tenant: "shell", Message: mcPBMessage("may I?")}); err == nil {
		t.Error("mon SendMessage over gRPC tenant shell: served, want refused")
	} else if code := status.Code(err); code == codes.OK || code == codes.NotFound {
		t.Errorf("mon SendMessage over gRPC tenant shell: %v", err)
	}

	// ops: rate 2/s burst 2 over / and /shell/ together.
	start := time.Now()
	served := 0
	for i := range 30 {
		u := root
		if i%2 == 1 {
			u = shell
		}
		if r := harness.At(u, harness.Bearer(mcOps)).Call(t, "ListTasks", map[string]any{}); r.StatusCode == http.StatusOK {
			served++
		} else if r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("ops ListTasks: HTTP %d %s", r.StatusCode, r.Raw)
		}
	}
	elapsed := time.Since(start).Seconds()
	allowed := 2 + int(elapsed*2) + 1 // burst + refill, one of slack
	if served > allowed || served < 2 {
		t.Errorf("ops served %d of 30 in %.1fs over / and /shell/; the shared rate allows at most %d", served, elapsed, allowed)
	}
}

// Issue 26 item 3: the tenant pre-read before auth holds at most its cap
// per request, and a stalled one gives up after the read deadline (408),
// the held-bytes gauge back to 0.
func TestMultiAgentTenantPreReadBounded(t *testing.T) {
	t.Parallel()
	gw := mcStart(t, harness.StartRedis(t))
	host := strings.TrimPrefix(gw.URL, "http://")
	held := func() float64 {
		v, _ := metValue(metScrape(t, gw), "caddy_a2a_tenant_preread_bytes", nil)
		return v
	}
	open := func(sent int) net.Conn {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"text":"` + strings.Repeat("a", sent)
		fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", host, 1<<20, body)
		return c
	}
	// 20 connections announce 1 MiB, send 200 KiB and stall,
	// unauthenticated: each pre-read stops at 64 KiB and lets go of it (the
	// request goes on unrouted), so nothing stays held while they stall.
	prereads := func() float64 { // every outcome
		v, _ := metValue(metScrape(t, gw), "caddy_a2a_tenant_prereads_total", nil)
		return v
	}
	before := prereads()
	for range 20 {
		open(200 << 10)
	}
	// Wait for the 20 pre-reads to finish (the counter), not for the gauge
	// to read 0: it reads 0 before the server has even read the requests.
	deadline := time.Now().Add(30 * time.Second)
	for prereads() < before+20 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := prereads() - before; n < 20 {
		t.Fatalf("%v of 20 pre-reads finished", n)
	}
	if v := held(); v != 0 {
		t.Errorf("held while 20 capped pre-reads stall: %v, want 0", v)
	}
	// One sends 1 KiB and stalls: held while it waits, then 408.
	c := open(1 << 10)
	deadline = time.Now().Add(5 * time.Second)
	for held() == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if v := held(); v <= 0 || v > 64<<10 {
		t.Errorf("held during the stalled pre-read: %v, want 0 < v <= 64 KiB", v)
	}
	start := time.Now()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	line := make([]byte, 12)
	if _, err := c.Read(line); err != nil || !strings.Contains(string(line), "408") {
		t.Fatalf("stalled pre-read: %q %v, want 408 after the read timeout", line, err)
	}
	if waited := time.Since(start); waited > 15*time.Second {
		t.Errorf("408 after %s", waited)
	}
	if v := held(); v != 0 {
		t.Errorf("held after the deadline: %v, want 0", v)
	}
}

// TURN-10 on stdio: `caddy a2a stdio` on a multi-agent site serves the
// root agent, and a request naming the tenant of an agent that shares the
// root's auth is served by that agent; an agent with its own auth, or a
// tenant the site does not serve, is TaskNotFoundError.
func TestMultiAgentTenantStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := harness.FreePort(t)
	cf := fmt.Sprintf(`{
	admin off
	persist_config off
	grace_period 1s
	a2a {
		data_dir %s/data
		shutdown_timeout 1s
	}
}

http://127.0.0.1:%d {
	a2a {
		card {
			name site-root
		}
		auth {
			principal alice bearer %s
		}
		agent shell {
			card {
				name shell-agent
			}
		}
		agent own {
			card {
				name own-agent
			}
			auth {
				bearer %s
			}
		}
	}
}
`, dir, port, mcAlice, mcOwn)
	if err := os.WriteFile(filepath.Join(dir, "Caddyfile"), []byte(cf), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startStdio(t, dir, "--principal", "alice")
	send := func(id, method, params string) stdioReply {
		p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%q,"method":%q,"params":%s}`, id, method, params))
		return p.nextFor(fmt.Sprintf("%q", id), nil)
	}
	rootTask := stdioTask(t, p.nextForSend(t, "r", stdioSend("r", "SendMessage", "to the root")))
	shellTask := stdioTask(t, send("s", "SendMessage", `{"tenant":"shell","message":{"messageId":"mc-stdio-s","role":"ROLE_USER","parts":[{"text":"to shell"}]}}`))
	if r := send("g1", "GetTask", fmt.Sprintf(`{"tenant":"shell","id":%q}`, shellTask.ID)); r.Error != nil {
		t.Errorf("GetTask tenant shell: %+v", r.Error)
	}
	if r := send("g2", "GetTask", fmt.Sprintf(`{"id":%q}`, rootTask.ID)); r.Error != nil {
		t.Errorf("GetTask of the root's task: %+v (stdio should serve the root agent)", r.Error)
	}
	for i, params := range []string{
		fmt.Sprintf(`{"id":%q}`, shellTask.ID),
		fmt.Sprintf(`{"tenant":"shell","id":%q}`, rootTask.ID),
		fmt.Sprintf(`{"tenant":"own","id":%q}`, shellTask.ID),
		`{"tenant":"own","id":"x"}`,
		fmt.Sprintf(`{"tenant":"nope","id":%q}`, shellTask.ID),
	} {
		if r := send(fmt.Sprintf("n%d", i), "GetTask", params); r.Error == nil || r.Error.Code != -32001 {
			t.Errorf("GetTask %s: %+v, want TaskNotFoundError", params, r.Error)
		}
	}
	if code := p.closeAndWait(20 * time.Second); code != 0 {
		t.Errorf("exit %d\n%s", code, p.stderr.String())
	}
}

// nextForSend sends line and returns the reply of its id.
func (p *stdioProc) nextForSend(t *testing.T, id, line string) stdioReply {
	t.Helper()
	p.send(line)
	return p.nextFor(fmt.Sprintf("%q", id), nil)
}

// AUTH-10: `caddy adapt` shows the limits where they apply: the root's
// rules on the agent that inherits its auth (marked with the site), the
// agent's own rule in place of the root's for its principal, and none on
// the agent with an auth of its own.
func TestMultiAgentLimitsAdapt(t *testing.T) {
	t.Parallel()
	site := `http://127.0.0.1:1 {
	a2a {
		card {
			name root
		}
		auth {
			principal mon bearer ` + mcMon + `
			principal ops bearer ` + mcOps + `
		}
		` + mcRootLimits + `
		agent shell {
			card {
				name shell
			}
			limits ops {
				rate 5/s
			}
		}
		agent own {
			card {
				name own
			}
			auth {
				bearer ` + mcOwn + `
			}
		}
	}
}
`
	out, err := harness.Adapt(t, site)
	if err != nil {
		t.Fatalf("adapt: %v\n%s", err, out)
	}
	doc := out[strings.Index(out, `{"apps"`):]
	var cfg any
	if err := json.NewDecoder(strings.NewReader(doc)).Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	limits := map[string]string{} // path prefix → limits JSON
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if x["handler"] == "a2a" {
				prefix, _ := x["card"].(map[string]any)["path_prefix"].(string)
				b, _ := json.Marshal(x["limits"])
				limits[prefix] = string(b)
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(cfg)
	want := map[string]string{
		"":       `{"mon":{"allow_methods":["GetTask","ListTasks"],"site":"site0"},"ops":{"burst":2,"rate":2,"site":"site0"}}`,
		"/shell": `{"mon":{"allow_methods":["GetTask","ListTasks"],"site":"site0"},"ops":{"rate":5}}`,
		"/own":   `null`,
	}
	for p, w := range want {
		if limits[p] != w {
			t.Errorf("limits of %q: %s, want %s", p, limits[p], w)
		}
	}
}

// maSendAuth sends a SendMessage with token to the agent at url and
// returns the task id.
func maSendAuth(t *testing.T, url, token string) string {
	t.Helper()
	res, rerr := harness.At(url, harness.Bearer(token)).RPC(t, "SendMessage", map[string]any{"message": bkMessage("hi", "", nil)})
	if rerr != nil {
		t.Fatalf("SendMessage to %s: %v", url, rerr)
	}
	task, _ := res["task"].(map[string]any)
	id, _ := task["id"].(string)
	if id == "" {
		t.Fatalf("SendMessage to %s: no task in %v", url, res)
	}
	return id
}
