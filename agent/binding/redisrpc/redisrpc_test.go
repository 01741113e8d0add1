package redisrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

const replyStream = DefaultResponsePrefix + ":client-1"

// assertDrained checks that the request stream holds no entry and the
// group nothing pending: every request was acknowledged.
func assertDrained(t *testing.T, rdb *redis.Client) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		p, err := rdb.XPending(t.Context(), DefaultRequestStream, DefaultGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := rdb.XLen(t.Context(), DefaultRequestStream).Result()
		if p.Count == 0 && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("requests not acknowledged: %d pending, %d in the stream", p.Count, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisRPCUnary: XPORT-5 — a SendMessage entry is answered by one
// final entry carrying the correlation id and the JSON-RPC result, the
// reply stream gets an expiry, and the request is acknowledged.
func TestRedisRPCUnary(t *testing.T) {
	rdb := startRedis(t)
	c := startConsumer(t, rdb, newService(t, nil), Options{}, nil)
	send(t, rdb, "corr-1", replyStream, rpcPayload(7, a2a.MethodSendMessage, sendParams("hello")), map[string]string{"A2A-Version": "1.0"})
	got := readUntilFinal(t, rdb, replyStream, 10*time.Second)
	if len(got) != 1 {
		t.Fatalf("unary answer: %d entries, want 1", len(got))
	}
	if got[0].Correlation != "corr-1" || got[0].Final != "true" {
		t.Fatalf("entry %+v", got[0])
	}
	r := decode(t, got[0].Payload)
	if r.Error != nil || string(r.ID) != "7" || !strings.Contains(string(r.Result), "Echo: hello") {
		t.Fatalf("payload %s", got[0].Payload)
	}
	if ttl := rdb.TTL(t.Context(), replyStream).Val(); ttl <= 0 || ttl > DefaultReplyTTL {
		t.Fatalf("reply stream TTL %v, want (0, %v]", ttl, DefaultReplyTTL)
	}
	assertDrained(t, rdb)
	if s := c.Stats(); s.Served != 1 || s.Refused != 0 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRedisRPCStream: XPORT-5 — SendStreamingMessage writes one final=false
// entry per event (each a JSON-RPC response with the request id) and a
// last final=true entry; the request is acknowledged only after it.
func TestRedisRPCStream(t *testing.T) {
	rdb := startRedis(t)
	startConsumer(t, rdb, newService(t, backend.EchoBackend{Chunks: 4, Delay: 20 * time.Millisecond}), Options{}, nil)
	send(t, rdb, "s-1", replyStream, rpcPayload("abc", a2a.MethodSendStreamingMessage, sendParams("stream me")), nil)
	got := readUntilFinal(t, rdb, replyStream, 10*time.Second)
	if len(got) < 4 {
		t.Fatalf("stream: %d entries, want the events and a final one", len(got))
	}
	var text strings.Builder
	for i, e := range got[:len(got)-1] {
		if e.Final != "false" || e.Correlation != "s-1" {
			t.Fatalf("event %d: %+v", i, e)
		}
		r := decode(t, e.Payload)
		if string(r.ID) != `"abc"` || r.Error != nil || len(r.Result) == 0 {
			t.Fatalf("event %d payload %s", i, e.Payload)
		}
		text.WriteString(string(r.Result))
	}
	last := decode(t, got[len(got)-1].Payload)
	if !last.Final || string(last.ID) != `"abc"` {
		t.Fatalf("final entry payload %s", got[len(got)-1].Payload)
	}
	if !strings.Contains(text.String(), "TASK_STATE_INPUT_REQUIRED") {
		t.Fatalf("the events never reached the turn's end: %s", text.String())
	}
	assertDrained(t, rdb)
}

// TestRedisRPCForeignReplyRefused: XPORT-5 — a reply_stream outside the
// prefix (another key, a look-alike prefix, the request stream itself) is
// never written to, nor is a key under the prefix that is not a stream;
// the entry is acknowledged and counted, and the next valid request is
// still answered.
func TestRedisRPCForeignReplyRefused(t *testing.T) {
	rdb := startRedis(t)
	c := startConsumer(t, rdb, newService(t, nil), Options{}, nil)
	// A string key under the prefix: no answer could be written there.
	if err := rdb.Set(t.Context(), DefaultResponsePrefix+":str", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	foreign := []string{"victim:stream", DefaultResponsePrefix + "x", DefaultResponsePrefix + ":", DefaultRequestStream, "", DefaultResponsePrefix + ":str"}
	for i, s := range foreign {
		send(t, rdb, "f", s, rpcPayload(i, a2a.MethodSendMessage, sendParams("x")), nil)
	}
	send(t, rdb, "ok", replyStream, rpcPayload(1, a2a.MethodGetTask, map[string]any{"id": "nope"}), nil)
	got := readUntilFinal(t, rdb, replyStream, 10*time.Second)
	if r := decode(t, got[0].Payload); r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
		t.Fatalf("valid request after the refused ones: %s", got[0].Payload)
	}
	assertDrained(t, rdb)
	for _, s := range foreign[:3] {
		if n := rdb.Exists(t.Context(), s).Val(); n != 0 {
			t.Fatalf("foreign stream %q was written to", s)
		}
	}
	if s := c.Stats(); s.Refused != int64(len(foreign)) || s.Served != 1 {
		t.Fatalf("stats %+v, want %d refused and 1 served", s, len(foreign))
	}
}

// TestRedisRPCBadPayloads: XPORT-5 — bad JSON is answered -32700, a
// non-object -32600, a payload over the limit and bad headers -32600, a
// missing payload -32600; each as one final entry.
func TestRedisRPCBadPayloads(t *testing.T) {
	rdb := startRedis(t)
	startConsumer(t, rdb, newService(t, nil), Options{MaxPayloadBytes: 1024}, nil)
	cases := []struct {
		name string
		vals []any
		code int
	}{
		{"bad-json", []any{FieldPayload, `{"jsonrpc":"2.0",`}, a2a.CodeParseError},
		{"not-object", []any{FieldPayload, `"hello"`}, a2a.CodeInvalidRequest},
		{"too-large", []any{FieldPayload, `{"x":"` + strings.Repeat("a", 2000) + `"}`}, a2a.CodeInvalidRequest},
		{"bad-headers", []any{FieldPayload, rpcPayload(1, a2a.MethodGetTask, nil), FieldHeaders, `[1]`}, a2a.CodeInvalidRequest},
		{"no-payload", []any{}, a2a.CodeInvalidRequest},
		{"bad-version", []any{FieldPayload, rpcPayload(1, a2a.MethodGetTask, map[string]any{"id": "x"}), FieldHeaders, `{"A2A-Version":"9.9"}`}, a2a.CodeVersionNotSupported},
	}
	for _, tc := range cases {
		stream := DefaultResponsePrefix + ":" + tc.name
		vals := append([]any{FieldCorrelationID, tc.name, FieldReplyStream, stream}, tc.vals...)
		if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: DefaultRequestStream, Values: vals}).Err(); err != nil {
			t.Fatal(err)
		}
		got := readUntilFinal(t, rdb, stream, 10*time.Second)
		if len(got) != 1 {
			t.Fatalf("%s: %d entries", tc.name, len(got))
		}
		if r := decode(t, got[0].Payload); r.Error == nil || r.Error.Code != tc.code {
			t.Fatalf("%s: payload %s, want code %d", tc.name, got[0].Payload, tc.code)
		}
	}
	assertDrained(t, rdb)
}

// TestRedisRPCAuth: XPORT-5 — with auth on, a request without credentials
// or with a wrong one is answered -31401 (UNAUTHENTICATED) and never
// served; headers.authorization (bearer, basic) and the API key header map
// to the principal like the HTTP binding, and tasks stay scoped to it.
func TestRedisRPCAuth(t *testing.T) {
	rdb := startRedis(t)
	authn, _, err := auth.New(auth.Config{NoEnv: true, Principals: []auth.Principal{
		{Name: "alice", Token: "alice-token"},
		{Name: "bob", APIKey: "bob-key"},
	}}, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	svc := newService(t, nil)
	startConsumer(t, rdb, svc, Options{}, authn)
	ask := func(name string, headers map[string]string, payload string) rpcResp {
		stream := DefaultResponsePrefix + ":" + name
		send(t, rdb, name, stream, payload, headers)
		got := readUntilFinal(t, rdb, stream, 10*time.Second)
		return decode(t, got[len(got)-1].Payload)
	}
	for name, h := range map[string]map[string]string{
		"none":  nil,
		"wrong": {"authorization": "Bearer nope"},
		"basic": {"authorization": "Basic YWxpY2U6YWxpY2UtdG9rZW4="},
	} {
		r := ask(name, h, rpcPayload(3, a2a.MethodSendMessage, sendParams("x")))
		if r.Error == nil || r.Error.Code != a2a.CodeUnauthenticated || string(r.ID) != "3" || !strings.Contains(string(r.Error.Data), "UNAUTHENTICATED") {
			t.Fatalf("%s: %+v", name, r)
		}
	}
	list := ask("list-alice-empty", map[string]string{"Authorization": "Bearer alice-token"}, rpcPayload(1, a2a.MethodListTasks, map[string]any{}))
	if r := string(list.Result); list.Error != nil || strings.Contains(r, `"id"`) {
		t.Fatalf("refused requests must not have run: %s", r)
	}
	sent := ask("alice", map[string]string{"Authorization": "Bearer alice-token"}, rpcPayload(4, a2a.MethodSendMessage, sendParams("hi")))
	if sent.Error != nil {
		t.Fatalf("alice: %+v", sent.Error)
	}
	var task struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	_ = json.Unmarshal(sent.Result, &task)
	if task.Task.ID == "" {
		t.Fatalf("no task in %s", sent.Result)
	}
	get := rpcPayload(5, a2a.MethodGetTask, map[string]any{"id": task.Task.ID})
	if r := ask("bob-get", map[string]string{"x-api-key": "bob-key"}, get); r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
		t.Fatalf("bob sees alice's task: %+v", r)
	}
	if r := ask("alice-get", map[string]string{"authorization": "bearer alice-token"}, get); r.Error != nil {
		t.Fatalf("alice cannot read her task: %+v", r.Error)
	}
	assertDrained(t, rdb)
}

// TestRedisRPCReclaim: XPORT-5 — an entry delivered to a consumer that
// died without acknowledging it is re-claimed after claim_after by a live
// consumer and answered exactly once.
func TestRedisRPCReclaim(t *testing.T) {
	rdb := startRedis(t)
	ctx := t.Context()
	if err := rdb.XGroupCreateMkStream(ctx, DefaultRequestStream, DefaultGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	send(t, rdb, "orphan", replyStream, rpcPayload(9, a2a.MethodSendMessage, sendParams("orphan")), nil)
	// The "dead" consumer takes the entry and never answers.
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: DefaultGroup, Consumer: "dead", Streams: []string{DefaultRequestStream, ">"}, Count: 1}).Result()
	if err != nil || len(res[0].Messages) != 1 {
		t.Fatalf("dead consumer read: %v", err)
	}
	start := time.Now()
	c := startConsumer(t, rdb, newService(t, nil), Options{ClaimAfter: time.Second, Consumer: "live"}, nil)
	got := readUntilFinal(t, rdb, replyStream, 15*time.Second)
	if waited := time.Since(start); waited < 900*time.Millisecond {
		t.Fatalf("re-claimed after %v, before claim_after", waited)
	}
	if len(got) != 1 || got[0].Correlation != "orphan" {
		t.Fatalf("answers %+v", got)
	}
	assertDrained(t, rdb)
	time.Sleep(1500 * time.Millisecond) // sleep: another claim pass must find nothing
	if n := rdb.XLen(ctx, replyStream).Val(); n != 1 {
		t.Fatalf("%d answers, want exactly one", n)
	}
	if s := c.Stats(); s.Reclaimed != 1 || s.Served != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestRedisRPCLeaseRefresh: XPORT-5 — a request that runs longer than
// claim_after is not re-claimed by a second consumer while the first
// still serves it: one answer only.
func TestRedisRPCLeaseRefresh(t *testing.T) {
	rdb := startRedis(t)
	svc := newService(t, backend.EchoBackend{Chunks: 5, Delay: 600 * time.Millisecond})
	a := startConsumer(t, rdb, svc, Options{ClaimAfter: time.Second, Consumer: "a"}, nil)
	send(t, rdb, "long", replyStream, rpcPayload(1, a2a.MethodSendMessage, sendParams("slow")), nil)
	waitFor(t, func() bool { return len(a.inflightIDs()) == 1 })
	b := startConsumer(t, rdb, svc, Options{ClaimAfter: time.Second, Consumer: "b"}, nil)
	got := readUntilFinal(t, rdb, replyStream, 20*time.Second)
	if len(got) != 1 {
		t.Fatalf("%d answers", len(got))
	}
	time.Sleep(1500 * time.Millisecond) // sleep: past claim_after, b must not re-claim a refreshed lease
	if n := rdb.XLen(t.Context(), replyStream).Val(); n != 1 || b.Stats().Reclaimed != 0 {
		t.Fatalf("%d answers, %d re-claimed by b: the lease was not refreshed", n, b.Stats().Reclaimed)
	}
}

// TestRedisRPCStopAbandons: XPORT-5 — Stop with a request in flight past
// the grace leaves it pending (no final answer, not acknowledged) and ends
// every goroutine; a successor re-claims it and answers it.
func TestRedisRPCStopAbandons(t *testing.T) {
	rdb := startRedis(t)
	svc := newService(t, backend.EchoBackend{Chunks: 4, Delay: 500 * time.Millisecond})
	a := New(rdb, jsonrpcDispatcher(svc), Options{ClaimAfter: time.Second, Consumer: "a"}, nil, nil)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	send(t, rdb, "cut", replyStream, rpcPayload(1, a2a.MethodSendStreamingMessage, sendParams("cut short")), nil)
	waitFor(t, func() bool { return len(a.inflightIDs()) == 1 })
	stopped := make(chan struct{})
	go func() { a.Stop(200 * time.Millisecond); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("Stop did not return")
	}
	if s := a.Stats(); s.Abandoned != 1 || s.Served != 0 {
		t.Fatalf("stats %+v", s)
	}
	if p := rdb.XPending(t.Context(), DefaultRequestStream, DefaultGroup).Val(); p.Count != 1 {
		t.Fatalf("%d pending after the stop, want 1", p.Count)
	}
	b := startConsumer(t, rdb, svc, Options{ClaimAfter: time.Second, Consumer: "b"}, nil)
	got := readUntilFinal(t, rdb, replyStream, 20*time.Second)
	finals := 0
	for _, e := range got {
		if e.Final == "true" {
			finals++
		}
	}
	if finals != 1 || b.Stats().Reclaimed != 1 {
		t.Fatalf("%d finals, stats %+v", finals, b.Stats())
	}
	assertDrained(t, rdb)
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = context.Background

// TestRedisRPCStopNoLeak: a stopped consumer leaves no goroutine behind
// (the read loop, the lease refresher and the handlers all end), and
// reads nothing more.
func TestRedisRPCStopNoLeak(t *testing.T) {
	rdb := startRedis(t)
	svc := newService(t, nil)
	// Warm up the client pool and the service outside the count.
	warm := New(rdb, jsonrpcDispatcher(svc), Options{Consumer: "warm"}, nil, nil)
	if err := warm.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	send(t, rdb, "w", replyStream, rpcPayload(1, a2a.MethodListTasks, map[string]any{}), nil)
	readUntilFinal(t, rdb, replyStream, 10*time.Second)
	warm.Stop(time.Second)
	before := runtime.NumGoroutine()
	c := New(rdb, jsonrpcDispatcher(svc), Options{Consumer: "c"}, nil, nil)
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		send(t, rdb, fmt.Sprint("r", i), replyStream, rpcPayload(i, a2a.MethodListTasks, map[string]any{}), nil)
	}
	waitFor(t, func() bool { return c.Stats().Served == 5 })
	start := time.Now()
	c.Stop(time.Second)
	if d := time.Since(start); d > DefaultBlock+time.Second {
		t.Fatalf("Stop took %v, want at most one Block", d)
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Stop, %d before Start", runtime.NumGoroutine(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	send(t, rdb, "late", replyStream, rpcPayload(9, a2a.MethodListTasks, map[string]any{}), nil)
	time.Sleep(DefaultBlock + 200*time.Millisecond) // sleep: a stopped consumer must not read the request
	if n, _ := rdb.XLen(t.Context(), DefaultRequestStream).Result(); n != 1 {
		t.Fatalf("a stopped consumer read a request (%d left)", n)
	}
}

// TestRedisRPCGiveUp: XPORT-5 — a request delivered more than
// MaxDeliveries times (it keeps killing its consumers) is answered with an
// internal error and acknowledged instead of run again.
func TestRedisRPCGiveUp(t *testing.T) {
	rdb := startRedis(t)
	ctx := t.Context()
	if err := rdb.XGroupCreateMkStream(ctx, DefaultRequestStream, DefaultGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	id := send(t, rdb, "poison", replyStream, rpcPayload(1, a2a.MethodSendMessage, sendParams("poison")), nil)
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: DefaultGroup, Consumer: "dead", Streams: []string{DefaultRequestStream, ">"}}).Err(); err != nil {
		t.Fatal(err)
	}
	// Four more deaths: each re-claim adds a delivery.
	for range MaxDeliveries - 1 {
		if err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: DefaultRequestStream, Group: DefaultGroup, Consumer: "dead", Messages: []string{id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1100 * time.Millisecond) // sleep: the entry must be idle past claim_after (elapsed time is tested)
	c := startConsumer(t, rdb, newService(t, nil), Options{ClaimAfter: time.Second}, nil)
	got := readUntilFinal(t, rdb, replyStream, 15*time.Second)
	r := decode(t, got[0].Payload)
	if len(got) != 1 || r.Error == nil || r.Error.Code != a2a.CodeInternalError || !strings.Contains(r.Error.Message, "deliveries") {
		t.Fatalf("answer %+v", got)
	}
	assertDrained(t, rdb)
	if s := c.Stats(); s.GaveUp != 1 || s.Reclaimed != 1 {
		t.Fatalf("stats %+v", s)
	}
}
