package tests

// Live events and cancels across gateway instances on one Redis
// (SCALE-1, RPC-11, RPC-10): a turn running on A is followed by a
// SubscribeToTask on B, event by event, and a CancelTask on B stops it on A.

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// startOnA starts a slow streaming turn on a and returns its stream, the
// task id and the events read so far (the Task, WORKING, the first chunk).
func startOnA(t *testing.T, a, text string) (*harness.Stream, string, []harness.Event) {
	t.Helper()
	s := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg(text, "", "")}, harness.ID("s1"))
	evs := s.Take(3, 30*time.Second)
	task, _ := evs[0].Map["task"].(map[string]any)
	if task == nil {
		t.Fatalf("first event on A is not a Task: %v", evs[0].Map)
	}
	return s, task["id"].(string), evs
}

// TestRedisSubscribeAcrossInstances (SCALE-1, RPC-11, RPC-17): while a
// turn runs on A, SubscribeToTask on B gets the Task, then every later
// event of the turn in order, with A's event ids, and ends with the turn's
// last event; resumed on B with Last-Event-ID mid-turn it gets exactly A's
// events after that id, then the live ones.
func TestRedisSubscribeAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)
	sa, taskID, onA := startOnA(t, a, "follow me")

	sb := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("b1"))
	sr := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("b2"), harness.Header("Last-Event-ID", "1"), resumeExt)
	onA = append(onA, sa.RestEvents(30*time.Second)...)
	if eventStateOf(onA[len(onA)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("turn on A: %v", sseStates(onA))
	}
	onB := sb.RestEvents(30 * time.Second)
	if len(onB) < 2 || onB[0].Map["task"] == nil {
		t.Fatalf("SubscribeToTask on B: %v, want the Task then the turn's events", sseStates(onB))
	}
	from, err := strconv.Atoi(onB[0].SSEID)
	if err != nil || from < 1 || from >= len(onA) {
		t.Fatalf("B's Task has event id %q; want one of A's ids", onB[0].SSEID)
	}
	// A's event ids are 1.. after its Task (onA[0]).
	if got, want := sseStates(onB[1:]), sseStates(onA[from+1:]); !slices.Equal(got, want) {
		t.Fatalf("events on B after its Task (at %d):\n got %v\nwant %v (A's, in order, to the end)", from, got, want)
	}
	resumed := sr.RestEvents(30 * time.Second)
	if got, want := sseStates(resumed), sseStates(onA[2:]); !slices.Equal(got, want) {
		t.Fatalf("resumed on B after 1:\n got %v\nwant %v", got, want)
	}
}

// TestRedisCancelAcrossInstances (SCALE-1, RPC-10): CancelTask on B for a
// turn running on A stops that turn — A's stream ends CANCELED without
// the rest of its chunks — answers CANCELED once it stopped, and the
// stored state stays CANCELED on both instances.
func TestRedisCancelAcrossInstances(t *testing.T) {
	t.Parallel()
	ga, gb := resumeRedisPair(t)
	a, b := ga.URL, gb.URL
	sa, taskID, _ := startOnA(t, a, "cancel me elsewhere")
	start := time.Now()
	res, rerr := harness.At(b).RPC(t, "CancelTask", map[string]any{"id": taskID})
	if rerr != nil {
		t.Fatalf("CancelTask on B: %v", rerr)
	}
	if st := res["status"].(map[string]any)["state"]; st != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask on B answered %v, want CANCELED", st)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("CancelTask on B took %v", d)
	}
	rest := sa.RestEvents(30 * time.Second)
	if len(rest) == 0 || eventStateOf(rest[len(rest)-1]) != "TASK_STATE_CANCELED" {
		t.Fatalf("A's stream after the cancel on B: %v, want it to end CANCELED", sseStates(rest))
	}
	chunks := 0
	for _, ev := range rest {
		if ev.Map["artifactUpdate"] != nil {
			chunks++
		}
	}
	if chunks >= 4 {
		t.Errorf("A's turn sent %d more chunks after the cancel: it was not stopped", chunks)
	}
	// The turn's end does not overwrite the cancel, on either instance.
	// A's turn ends (its final write done): the cancel stays.
	if !turnLogged(t, 10*time.Second, taskID, ga) {
		t.Fatalf("A's turn never ended:\n%s", ga.Output())
	}
	for _, u := range []string{a, b} {
		got, rerr := harness.At(u).RPC(t, "GetTask", map[string]any{"id": taskID})
		if rerr != nil {
			t.Fatalf("GetTask: %v", rerr)
		}
		if st := got["status"].(map[string]any)["state"]; st != "TASK_STATE_CANCELED" {
			t.Fatalf("stored state on %s = %v, want CANCELED", u, st)
		}
		// Cancel again, on either instance: idempotent (A2A 1.0 §3.3.1),
		// the stored canceled task unchanged.
		again, rerr := harness.At(u).RPC(t, "CancelTask", map[string]any{"id": taskID})
		if rerr != nil {
			t.Fatalf("second CancelTask on %s: %v", u, rerr)
		}
		if gs, as := got["status"].(map[string]any), again["status"].(map[string]any); as["state"] != "TASK_STATE_CANCELED" || as["timestamp"] != gs["timestamp"] {
			t.Errorf("second CancelTask on %s = %v, want the stored %v", u, as, gs)
		}
	}
}

// TestRedisCancelExecAcrossInstances (SCALE-1, RPC-10, TURN-3): CancelTask
// on B for an exec turn running on A terminates the agent's process group
// on A, and the task stays CANCELED.
func TestRedisCancelExecAcrossInstances(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	script := filepath.Join(harness.RepoRoot(), "tests", "testdata", "exec_agent.sh")
	site := "a2a {\n\tcard {\n\t\tname exec-agent\n\t}\n\tauth {\n\t\tprincipal alice bearer tok-alice\n\t}\n\tbackend exec " + script + " {\n\t\tmode per_turn\n\t\tgrace_period 500ms\n\t}\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	ga, gb := gws[0], gws[1]

	stream := harness.At(ga.URL, harness.Bearer("tok-alice")).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("slow", "", nil)})
	taskID, pid := bkWaitWorkingPID(t, stream)
	res, rerr := harness.At(gb.URL, harness.Bearer("tok-alice")).RPC(t, "CancelTask", map[string]any{"id": taskID})
	if rerr != nil {
		t.Fatalf("CancelTask on B: %v", rerr)
	}
	if st := bkStr(res, "status", "state"); st != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask on B answered %s", st)
	}
	bkGroupGone(t, pid, 5*time.Second)
	if state, _ := bkFinalText(stream.Rest(20 * time.Second)); state != "TASK_STATE_CANCELED" {
		t.Fatalf("A's turn ended %s, want CANCELED", state)
	}
	got, rerr := harness.At(ga.URL, harness.Bearer("tok-alice")).RPC(t, "GetTask", map[string]any{"id": taskID})
	if rerr != nil || bkStr(got, "status", "state") != "TASK_STATE_CANCELED" {
		t.Fatalf("stored task on A: %v %v, want CANCELED", got, rerr)
	}
}

// TestRedisSubscribeWaitsAcrossInstances (RPC-11, SCALE-1): a
// SubscribeToTask on B of an input-required task gets the Task, then every
// event of the follow-up turn that runs on A, and ends with it.
func TestRedisSubscribeWaitsAcrossInstances(t *testing.T) {
	t.Parallel()
	a, b := resumeRedisGateways(t)
	s := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("first", "", "")}, harness.ID("s1"))
	first := s.RestEvents(30 * time.Second)
	if len(first) < 2 || eventStateOf(first[len(first)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("first turn on A: %v", sseStates(first))
	}
	taskID := first[0].Map["task"].(map[string]any)["id"].(string)
	wait := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("w1"))
	if ev, ok := wait.NextEvent(30 * time.Second); !ok || ev.Map["task"] == nil {
		t.Fatalf("SubscribeToTask on B: %v %v, want the Task first", ev.Map, ok)
	}
	s2 := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("second", "", taskID)}, harness.ID("s2"))
	second := s2.RestEvents(30 * time.Second)
	if len(second) < 3 || eventStateOf(second[len(second)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("second turn on A: %v", sseStates(second))
	}
	onB := wait.RestEvents(30 * time.Second)
	if got, want := sseStates(onB), sseStates(second[1:]); !slices.Equal(got, want) {
		t.Fatalf("B's waiting stream:\n got %v\nwant %v (every event of A's follow-up turn, then the end)", got, want)
	}
}

// TestRedisCrossInstanceLatency (SCALE-1, issue 15 performance): the same
// event's arrival on a stream of A (the instance running the turn) and on
// a SubscribeToTask stream of B, read side by side; B's delay over A is
// the cross-instance latency (append on A → XREAD on B → SSE), logged as
// p50/p99.
func TestRedisCrossInstanceLatency(t *testing.T) {
	addr := harness.StartRedis(t)
	site := "a2a {\n\tcard {\n\t\tname latency\n\t}\n\tbackend echo {\n\t\tdelay 10ms\n\t\tchunks 200\n\t}\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	a, b := gws[0].URL, gws[1].URL
	sa := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg(strings.Repeat("chunk ", 200), "", "")}, harness.ID("s1"))
	ev, ok := sa.NextEvent(30 * time.Second)
	if !ok || ev.Map["task"] == nil {
		t.Fatalf("turn on A: %v %v", ev.Map, ok)
	}
	taskID := ev.Map["task"].(map[string]any)["id"].(string)
	sb := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("b1"))
	read := func(s *harness.Stream, at map[string]time.Time, done chan<- struct{}) {
		defer close(done)
		for {
			ev, ok := s.NextEvent(30 * time.Second)
			if !ok {
				return
			}
			at[ev.SSEID] = time.Now()
		}
	}
	atA, atB := map[string]time.Time{}, map[string]time.Time{}
	da, db := make(chan struct{}), make(chan struct{})
	go read(sa, atA, da)
	go read(sb, atB, db)
	<-da
	<-db
	var lat []time.Duration
	for id, tb := range atB {
		if ta, ok := atA[id]; ok && id != "" {
			lat = append(lat, tb.Sub(ta))
		}
	}
	if len(lat) < 100 {
		t.Fatalf("only %d events seen on both instances", len(lat))
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("cross-instance event latency over %d events: p50 %v, p99 %v (B's arrival minus A's)", len(lat), p50, p99)
	if p99 > time.Second {
		t.Errorf("p99 cross-instance latency %v", p99)
	}
}

// TestRedisCancelSealedWhileRunnerFrozen (SCALE-1, RPC-10): the instance
// running a turn never gets a cancel (its process is stopped, as in a long
// pause, while its pub/sub connection is dropped and the task's cancel
// flag is lost): after cancel_drain the canceling instance stores
// CANCELED itself, sealed — when the frozen instance goes on, its turn's
// own final write is refused and the task stays CANCELED on both.
func TestRedisCancelSealedWhileRunnerFrozen(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	site := "a2a {\n\tcard {\n\t\tname frozen\n\t}\n\t" + protoSlowEcho + "\n\tcancel_drain 1s\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{})
	ga, gb := gws[0], gws[1]
	_, taskID, _ := startOnA(t, ga.URL, "freeze me")
	ga.Signal(syscall.SIGSTOP)
	if _, err := harness.RedisCommand(addr, "CLIENT", "KILL", "TYPE", "pubsub"); err != nil {
		t.Fatal(err)
	}
	res, rerr := harness.At(gb.URL).RPC(t, "CancelTask", map[string]any{"id": taskID})
	if _, err := harness.RedisCommand(addr, "DEL", "e2e:{t:"+taskID+"}:cx"); err != nil {
		t.Fatal(err)
	}
	ga.Signal(syscall.SIGCONT)
	if rerr != nil {
		t.Fatalf("CancelTask on B: %v", rerr)
	}
	if st := res["status"].(map[string]any)["state"]; st != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask on B answered %v, want CANCELED", st)
	}
	// A's turn goes on to its own end; its final write is refused.
	if !turnLogged(t, 15*time.Second, taskID, ga) {
		t.Fatalf("A's turn never ended:\n%s", ga.Output())
	}
	for _, u := range []string{ga.URL, gb.URL} {
		got, rerr := harness.At(u).RPC(t, "GetTask", map[string]any{"id": taskID})
		if rerr != nil {
			t.Fatalf("GetTask: %v", rerr)
		}
		if st := got["status"].(map[string]any)["state"]; st != "TASK_STATE_CANCELED" {
			t.Fatalf("stored state on %s = %v after the frozen instance went on, want CANCELED", u, st)
		}
	}
}
