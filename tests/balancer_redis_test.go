package tests

// Two gateways on one Redis behind a real Caddy balancer (SCALE-4): a
// third process of the same binary runs docs/scaling.md's balancer config
// (examples/redis-two-gateways/balancer.Caddyfile: reverse_proxy to both gateways) and every request of a
// client goes through it, to whichever gateway it picks.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// balancerSite is docs/scaling.md's balancer site block (SCALE-4)
// with the gateways' addresses; TLS at the edge is left out (a loopback
// http:// site).
func balancerSite(upstreams ...string) string {
	return "reverse_proxy " + strings.Join(upstreams, " ") + ` {
	lb_policy least_conn
	lb_try_duration 5s
	lb_try_interval 250ms
	health_uri /health?ready=1
	health_interval 2s
	health_timeout 2s
	fail_duration 30s
	max_fails 1
	flush_interval -1
	stream_timeout 24h
	stream_close_delay 5m
}`
}

// startBalanced starts two gateways with the echo backend on one Redis
// and the balancer in front of them; it returns the balancer's URL and
// the gateways.
func startBalanced(t *testing.T, backend string) (string, []*harness.Gateway) {
	t.Helper()
	addr := harness.StartRedis(t)
	site := "a2a {\n\tcard {\n\t\tname balanced\n\t}\n\t" + backend + "\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	lb := harness.StartGatewayWith(t, balancerSite(gws[0].Addr, gws[1].Addr), harness.Options{})
	return lb.URL, gws
}

// TestBalancerTwoGateways (SCALE-4, SCALE-1, RPC-10/11/17): through the
// balancer, a blocking send, then reads and lists (answered by either
// gateway) agree; a follow-up in the same context continues the task; a
// streaming send streams every event in order; three SubscribeToTask
// streams of a slow turn each get the Task, then exactly the turn's later
// events in order; CancelTask stops a running turn; ListTasks counts
// every task.
func TestBalancerTwoGateways(t *testing.T) {
	t.Parallel()
	// "Echo: <prompt>" in up to 40 chunks 100ms apart: a short prompt
	// answers in under a second, slowPrompt in 4s.
	lb, gws := startBalanced(t, "backend echo {\n\t\tdelay 100ms\n\t\tchunks 40\n\t}")
	slowPrompt := strings.Repeat("slow turn ", 5)
	tasks := 0

	// SendMessage, then GetTask and ListTasks through the balancer.
	first := scaleSend(t, lb, protoMsg("one", "", ""))
	tasks++
	id, ctxID := first["id"].(string), first["contextId"].(string)
	if harness.TaskState(first) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("SendMessage through the balancer: %v", first)
	}
	for i := range 6 { // several requests: both gateways answer some
		got, rerr := harness.At(lb).RPC(t, "GetTask", map[string]any{"id": id})
		if rerr != nil || got["id"] != id || harness.TaskState(got) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("GetTask %d through the balancer: %v %v", i, got, rerr)
		}
		if ids, total, _ := scaleList(t, lb, map[string]any{}); total != 1 || !slices.Equal(ids, []string{id}) {
			t.Fatalf("ListTasks %d through the balancer: %v total %d", i, ids, total)
		}
	}

	// A follow-up in the same context continues the task.
	cont := scaleSend(t, lb, protoMsg("two", ctxID, id))
	if cont["id"] != id || harness.TaskState(cont) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("follow-up through the balancer: %v", cont)
	}
	got, rerr := harness.At(lb).RPC(t, "GetTask", map[string]any{"id": id})
	if rerr != nil || !slices.Equal(historyTexts(got), []string{"one", "two"}) {
		t.Fatalf("history after the follow-up: %v %v", historyTexts(got), rerr)
	}

	// SendStreamingMessage: the Task, then consecutive event ids to the end.
	s := harness.At(lb).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("stream me", "", "")}, harness.ID("s1"))
	tasks++
	evs := s.RestEvents(30 * time.Second)
	if len(evs) < 4 || evs[0].Map["task"] == nil || eventStateOf(evs[len(evs)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("SendStreamingMessage through the balancer: %v", sseStates(evs))
	}
	wantConsecutive(t, "streaming send through the balancer", sseSeqs(t, evs[1:]), 1)
	working := 0 // the echo backend's text chunks are WORKING updates
	for _, ev := range evs {
		if eventStateOf(ev) == "TASK_STATE_WORKING" {
			working++
		}
	}
	if want := len([]rune("Echo: stream me")); working < want {
		t.Fatalf("streaming send: %d WORKING updates, want at least the %d chunks: %v", working, want, sseStates(evs))
	}

	// SubscribeToTask of a slow turn: each subscriber (on whichever
	// gateway) gets the Task, then the origin's events after the Task's
	// event id, in order, to the end. least_conn counts open requests:
	// while the turn's stream is open on one gateway, the first
	// subscriber goes to the other one (a cross-instance follower).
	sa, slowID, onA := startOnA(t, lb, slowPrompt)
	tasks++
	var subs []*harness.Stream
	for i := range 3 {
		subs = append(subs, harness.At(lb).Stream(t, "SubscribeToTask", map[string]any{"id": slowID}, harness.ID(fmt.Sprint("sub", i))))
	}
	onA = append(onA, sa.RestEvents(30*time.Second)...)
	if eventStateOf(onA[len(onA)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("slow turn: %v", sseStates(onA))
	}
	wantConsecutive(t, "slow turn", sseSeqs(t, onA[1:]), 1)
	for i, sub := range subs {
		got := sub.RestEvents(30 * time.Second)
		if len(got) < 2 || got[0].Map["task"] == nil {
			t.Fatalf("subscriber %d: %v, want the Task then events", i, sseStates(got))
		}
		var from int
		if _, err := fmt.Sscan(got[0].SSEID, &from); err != nil || from < 1 || from >= len(onA)-1 {
			t.Fatalf("subscriber %d: Task at event id %q; want one of the turn's ids before its end", i, got[0].SSEID)
		}
		if g, w := sseStates(got[1:]), sseStates(onA[from+1:]); !slices.Equal(g, w) {
			t.Fatalf("subscriber %d after its Task (at %d):\n got %v\nwant %v", i, from, g, w)
		}
	}

	// CancelTask of a running turn through the balancer (to the gateway
	// not holding the turn's stream, by least_conn: a cross-instance
	// cancel).
	sc, cancelID, _ := startOnA(t, lb, slowPrompt)
	tasks++
	res, rerr := harness.At(lb).RPC(t, "CancelTask", map[string]any{"id": cancelID})
	if rerr != nil || harness.TaskState(res) != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask through the balancer: %v %v", res, rerr)
	}
	rest := sc.RestEvents(30 * time.Second)
	if len(rest) == 0 || eventStateOf(rest[len(rest)-1]) != "TASK_STATE_CANCELED" {
		t.Fatalf("canceled turn's stream: %v, want it to end CANCELED", sseStates(rest))
	}
	if len(rest) >= 20 {
		t.Errorf("the canceled turn sent %d more events (of about 50): it was not stopped", len(rest))
	}
	// The canceled turn ends (its final write done): the cancel stays.
	if !turnLogged(t, 10*time.Second, cancelID, gws...) {
		t.Fatal("the canceled turn never ended on either gateway")
	}
	for i := range 4 {
		got, rerr := harness.At(lb).RPC(t, "GetTask", map[string]any{"id": cancelID})
		if rerr != nil || harness.TaskState(got) != "TASK_STATE_CANCELED" {
			t.Fatalf("GetTask %d of the canceled task: %v %v", i, got, rerr)
		}
	}

	for i, g := range gws {
		t.Logf("gateway %d logged %d info-level turn lines (quick routine turns log at debug) for %d turns in all", i, strings.Count(g.Output(), `"msg":"turn"`), tasks+1)
	}

	// Every task, counted through the balancer and on each gateway.
	for _, url := range []string{lb, lb, gws[0].URL, gws[1].URL} {
		if _, total, _ := scaleList(t, url, map[string]any{}); total != tasks {
			t.Fatalf("ListTasks on %s: totalSize %d, want %d", url, total, tasks)
		}
		if _, total, _ := scaleList(t, url, map[string]any{"status": "TASK_STATE_CANCELED"}); total != 1 {
			t.Fatalf("ListTasks CANCELED on %s: totalSize %d, want 1", url, total)
		}
	}
}
