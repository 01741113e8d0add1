package tests

// Redis restarted under running gateways (SCALE-1, SCALE-2, SCALE-4): a
// redis-server with AOF persistence is stopped cleanly and started again
// on the same port and directory while two gateways keep running; requests
// fail clearly during the outage and everything works again afterwards,
// without restarting a gateway.

import (
	"fmt"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// persistentRedis is a redis-server with appendonly persistence in its
// own directory that a test stops and starts again on the same port.
type persistentRedis struct {
	t    *testing.T
	bin  string
	dir  string
	port int
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// startPersistentRedis starts redis-server with appendonly yes and
// appendfsync always (every acknowledged write is on disk) on a free
// loopback port; it is killed at cleanup. Skips without redis-server
// (fails under CI=true).
func startPersistentRedis(t *testing.T) *persistentRedis {
	t.Helper()
	bin := harness.NeedTool(t, "redis-server", "the Redis restart tests")
	r := &persistentRedis{t: t, bin: bin, dir: t.TempDir(), port: harness.FreePort(t)}
	r.Addr = fmt.Sprintf("127.0.0.1:%d", r.port)
	t.Cleanup(func() {
		if r.cmd != nil {
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
	})
	r.Start()
	return r
}

// Start runs the server (again) and waits until it answers PING.
func (r *persistentRedis) Start() {
	r.t.Helper()
	r.cmd = exec.Command(r.bin, "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1", "--dir", r.dir,
		"--appendonly", "yes", "--appendfsync", "always", "--save", "")
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out := &strings.Builder{}
	r.cmd.Stdout, r.cmd.Stderr = out, out
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	done := make(chan struct{})
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(done) }(r.cmd)
	r.done = done
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		// A server loading its AOF answers -LOADING to PING.
		if reply, err := harness.RedisCommand(r.Addr, "PING"); err == nil && reply == "+PONG" {
			return
		}
		select {
		case <-done:
			r.t.Fatalf("redis-server exited")
		case <-time.After(50 * time.Millisecond):
		}
	}
	r.t.Fatal("redis-server did not answer PING")
}

// Stop sends SIGTERM (a clean shutdown: the AOF is flushed) and waits.
func (r *persistentRedis) Stop() {
	r.t.Helper()
	_ = r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(15 * time.Second):
		r.t.Fatal("redis-server did not stop on SIGTERM")
	}
	r.cmd = nil
}

// outageCall sends one JSON-RPC request while Redis is down: it must
// answer within bound with a JSON-RPC error or an HTTP 5xx.
func outageCall(t *testing.T, client *http.Client, url, method string, params any, bound time.Duration) {
	t.Helper()
	start := time.Now()
	r, err := harness.At(url).Send(http.MethodPost, harness.Envelope(method, params), harness.Client(client))
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s on %s while Redis is down: %v after %v, want an answer within %v", method, url, err, took, bound)
	}
	if took > bound {
		t.Fatalf("%s on %s while Redis is down took %v, want at most %v", method, url, took, bound)
	}
	if r.StatusCode < 500 && r.Error == nil {
		t.Fatalf("%s on %s while Redis is down: HTTP %d %.300s, want a JSON-RPC error or a 5xx", method, url, r.StatusCode, r.Raw)
	}
	if strings.Contains(string(r.Raw), "127.0.0.1") {
		t.Errorf("%s on %s: the error names an address: %.300s", method, url, r.Raw)
	}
	t.Logf("%s on %s while Redis is down: HTTP %d %.200s (%v)", method, url, r.StatusCode, r.Raw, took.Round(time.Millisecond))
}

// TestRedisRestartedMidRun (SCALE-1, SCALE-2, SCALE-4): two gateways on
// one persistent Redis; tasks are acknowledged, Redis is stopped (SIGTERM)
// and started again on the same port and directory. While it is down
// every request answers within a bound with an error (no hang, no crash);
// once it is back both gateways reconnect by themselves: every task
// acknowledged before is read on both, ListTasks counts them exactly, new
// sends work on both, a turn on A is followed live from B and canceled
// from B (the pub/sub listener resubscribed), and a turn longer than the
// instance lease runs to its end on A (A's lease is renewed again, B's
// reaper does not fail it).
func TestRedisRestartedMidRun(t *testing.T) {
	t.Parallel()
	const lease = 2 * time.Second
	// The echo backend answers "Echo: <prompt>" in up to 60 chunks 100ms
	// apart: a one-character prompt takes 0.7s, longPrompt 6s (three
	// leases).
	longPrompt := strings.Repeat("long turn ", 8)
	r := startPersistentRedis(t)
	site := "a2a {\n\tcard {\n\t\tname restart\n\t}\n\tbackend echo {\n\t\tdelay 100ms\n\t\tchunks 60\n\t}\n}"
	gws := harness.StartRedisGateways(t, r.Addr, 2, site, harness.Options{}, "instance_lease 2s")
	ga, gb := gws[0], gws[1]
	a, b := ga.URL, gb.URL

	// Acknowledged before the restart: three through A, three through B.
	var before []string
	for i := range 6 {
		url := a
		if i%2 == 1 {
			url = b
		}
		task := scaleSend(t, url, protoMsg(fmt.Sprint(i), "", ""))
		if harness.TaskState(task) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("task %d: %v", i, task)
		}
		before = append(before, task["id"].(string))
	}

	r.Stop()
	down := time.Now()
	const bound = 15 * time.Second
	client := &http.Client{Timeout: bound + 5*time.Second}
	for _, url := range []string{a, b} {
		outageCall(t, client, url, "GetTask", map[string]any{"id": before[0]}, bound)
		outageCall(t, client, url, "ListTasks", map[string]any{}, bound)
		outageCall(t, client, url, "SendMessage", map[string]any{"message": protoMsg("x", "", "")}, bound)
	}
	for _, g := range []*harness.Gateway{ga, gb} {
		select {
		case <-g.Exited():
			t.Fatalf("gateway %s exited during the outage:\n%s", g.URL, g.Output())
		default:
		}
	}
	// Keep Redis down longer than the instance lease: both leases end
	// while the gateways live.
	if d := lease + time.Second - time.Since(down); d > 0 {
		time.Sleep(d) // sleep: lease expiry is what is tested
	}
	r.Start()
	back := time.Now()
	t.Logf("Redis was down %v", back.Sub(down).Round(time.Millisecond))

	// Back: the gateways reconnect without a restart (the first requests
	// may still meet a pooled connection to the old server; allow a
	// short while).
	for _, url := range []string{a, b} {
		if !waitFor(t, 10*time.Second, func() bool {
			_, err := harness.At(url).Try("GetTask", map[string]any{"id": before[0]})
			return err == nil
		}) {
			t.Fatalf("GetTask on %s still fails 10s after Redis came back", url)
		}
	}
	t.Logf("both gateways answered again %v after Redis came back", time.Since(back).Round(time.Millisecond))
	for _, url := range []string{a, b} {
		for _, id := range before {
			res, rerr := harness.At(url).RPC(t, "GetTask", map[string]any{"id": id})
			if rerr != nil || res["id"] != id || harness.TaskState(res) != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("GetTask %s on %s after the restart: %v %v", id, url, res, rerr)
			}
		}
	}
	var after []string
	for _, url := range []string{a, b} {
		task := scaleSend(t, url, protoMsg("y", "", ""))
		if harness.TaskState(task) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("SendMessage on %s after the restart: %v", url, task)
		}
		after = append(after, task["id"].(string))
	}
	// The sends refused during the outage stored nothing: the list is
	// exactly the acknowledged tasks.
	want := append(append([]string(nil), before...), after...)
	for _, url := range []string{a, b} {
		ids, total, next := scaleList(t, url, map[string]any{"pageSize": 100})
		for _, id := range want {
			if !slices.Contains(ids, id) {
				t.Fatalf("ListTasks on %s after the restart lacks %s: %v", url, id, ids)
			}
		}
		if total != len(want) || len(ids) != len(want) || next != "" {
			t.Fatalf("ListTasks on %s after the restart: %d ids, totalSize %d, next %q; want exactly the %d acknowledged", url, len(ids), total, next, len(want))
		}
	}

	// Live events and cancels across instances work again.
	sa, taskID, _ := startOnA(t, a, longPrompt)
	sb := harness.At(b).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("b1"))
	if ev, ok := sb.NextEvent(30 * time.Second); !ok || ev.Map["task"] == nil {
		t.Fatalf("SubscribeToTask on B after the restart: %v %v, want the Task", ev.Map, ok)
	}
	res, rerr := harness.At(b).RPC(t, "CancelTask", map[string]any{"id": taskID})
	if rerr != nil || harness.TaskState(res) != "TASK_STATE_CANCELED" {
		t.Fatalf("CancelTask on B after the restart: %v %v", res, rerr)
	}
	rest := sa.RestEvents(30 * time.Second)
	if len(rest) == 0 || eventStateOf(rest[len(rest)-1]) != "TASK_STATE_CANCELED" {
		t.Fatalf("A's turn after the cancel on B: %v, want it to end CANCELED", sseStates(rest))
	}
	if n := len(rest); n >= 20 {
		t.Errorf("A's turn sent %d more events (of about 60) after the cancel on B: the cancel did not reach A", n)
	}
	if onB := sb.RestEvents(30 * time.Second); len(onB) == 0 || eventStateOf(onB[len(onB)-1]) != "TASK_STATE_CANCELED" {
		t.Fatalf("B's subscription: %v, want it to end CANCELED", sseStates(onB))
	}

	// A turn longer than two leases on A: B must not reap it (A's
	// heartbeat runs again after the outage).
	long := harness.At(a).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg(longPrompt, "", "")}, harness.ID("s2"))
	evs := long.RestEvents(60 * time.Second)
	if len(evs) < 3 || eventStateOf(evs[len(evs)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("long turn on A after the restart: %v, want it to end INPUT_REQUIRED (not FAILED by B's reaper)", sseStates(evs))
	}
	longID := evs[0].Map["task"].(map[string]any)["id"].(string)
	for _, url := range []string{a, b} {
		got, rerr := harness.At(url).RPC(t, "GetTask", map[string]any{"id": longID})
		if rerr != nil || harness.TaskState(got) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("long task on %s: %v %v", url, got, rerr)
		}
	}
	for _, g := range []*harness.Gateway{ga, gb} {
		if strings.Contains(g.Output(), "panic") {
			t.Fatalf("gateway %s panicked:\n%s", g.URL, g.Output())
		}
	}
}

// TestRedisFinalWriteDuringOutage (SCALE-1, nothing lost): a turn on A
// whose final write falls into a Redis outage is stored once Redis is
// back — the task does not stay WORKING, on A or on B — and a blocking
// SendMessage whose turn ends during the outage answers only after its
// final state is stored, with that state.
func TestRedisFinalWriteDuringOutage(t *testing.T) {
	t.Parallel()
	r := startPersistentRedis(t)
	site := "a2a {\n\tcard {\n\t\tname outage\n\t}\n\tbackend echo {\n\t\tdelay 100ms\n\t\tchunks 60\n\t}\n}"
	gws := harness.StartRedisGateways(t, r.Addr, 2, site, harness.Options{})
	ga, gb := gws[0], gws[1]

	// A streaming turn of about 1.5 s: its Task event gives the id.
	s := harness.At(ga.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("fifteen chars!", "", "")}, harness.ID("s1"))
	ev, ok := s.NextEvent(30 * time.Second)
	if !ok || ev.Map["task"] == nil {
		t.Fatalf("first event: %v", ev.Map)
	}
	id := ev.Map["task"].(map[string]any)["id"].(string)
	// A blocking send, started while Redis is up.
	blocking := make(chan map[string]any, 1)
	go func() {
		res, err := harness.At(ga.URL).Try("SendMessage", map[string]any{"message": protoMsg("fifteen chars!", "", "")})
		if err != nil {
			t.Errorf("blocking SendMessage: %v", err)
			blocking <- nil
			return
		}
		task, _ := res["task"].(map[string]any)
		blocking <- task
	}()
	// Both turns run (the store lists both WORKING) before Redis goes down.
	if !waitFor(t, 10*time.Second, func() bool {
		res, rerr := harness.At(ga.URL).RPC(t, "ListTasks", map[string]any{"status": "TASK_STATE_WORKING"})
		tasks, _ := res["tasks"].([]any)
		return rerr == nil && len(tasks) == 2
	}) {
		t.Fatal("the blocking send's turn never started")
	}
	r.Stop()
	// Both turns end (and fail to store) while Redis is down: the stream
	// gets the turn's last event (the stream stays open until it is
	// stored).
	var evs []harness.Event
	for {
		ev, ok := s.NextEvent(30 * time.Second)
		if !ok {
			t.Fatalf("stream during the outage ended after %v", sseStates(evs))
		}
		evs = append(evs, ev)
		if eventStateOf(ev) == "TASK_STATE_INPUT_REQUIRED" {
			break
		}
	}
	select {
	case task := <-blocking:
		t.Fatalf("blocking SendMessage answered while its final state could not be stored: %v", task)
	case <-time.After(2 * time.Second):
	}
	r.Start()
	var task map[string]any
	select {
	case task = <-blocking:
	case <-time.After(20 * time.Second):
		t.Fatal("blocking SendMessage did not answer after Redis came back")
	}
	if task == nil || harness.TaskState(task) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("blocking SendMessage answered %v", task)
	}
	if rest := s.RestEvents(20 * time.Second); len(rest) != 0 {
		t.Fatalf("events after the last one: %v", sseStates(rest))
	}
	for _, want := range []string{id, task["id"].(string)} {
		for _, url := range []string{ga.URL, gb.URL} {
			if !waitFor(t, 10*time.Second, func() bool {
				res, err := harness.At(url).Try("GetTask", map[string]any{"id": want})
				return err == nil && harness.TaskState(res) == "TASK_STATE_INPUT_REQUIRED"
			}) {
				res, err := harness.At(url).Try("GetTask", map[string]any{"id": want})
				t.Fatalf("task %s on %s after Redis came back: %v %v; want INPUT_REQUIRED stored", want, url, harness.TaskState(res), err)
			}
		}
	}
}
