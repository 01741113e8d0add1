package tests

// Attack (issue 26, "not attacked yet"): a Redis outage longer than
// `instance_lease` in the middle of a turn (store redis, SCALE-1,
// SCALE-4). Whatever the store lost meanwhile, the task must not stay
// WORKING forever on either instance, no gateway may panic or exit, and
// both serve again once Redis is back.

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// settled reports whether state is one a turn ends in (a terminal state
// or INPUT_REQUIRED, the normal end of an echo turn).
func settled(state string) bool {
	switch state {
	case "TASK_STATE_INPUT_REQUIRED", "TASK_STATE_COMPLETED", "TASK_STATE_FAILED", "TASK_STATE_CANCELED", "TASK_STATE_REJECTED":
		return true
	}
	return false
}

// TestAttackRedisOutageLongerThanLease (SCALE-1, SCALE-4, issue 26): two
// gateways on one Redis with instance_lease 2s; a 6 s streaming turn and
// a 6 s blocking turn run on A; Redis is stopped 1 s in and kept down for
// 4 s (two leases), then started again. Both tasks end settled (stored,
// not WORKING) on A and on B within 30 s, the blocking SendMessage
// answers, what each caller was told (the stream's last state, the
// blocking answer) is the stored state — FAILED when a reaper failed the
// task before the turn's final write — and both gateways serve new turns.
// The same with one gateway (no other instance to reap its turns), with
// the same checks.
func TestAttackRedisOutageLongerThanLease(t *testing.T) {
	t.Parallel()
	t.Run("two instances", func(t *testing.T) { redisOutageDuringTurns(t, 2) })
	t.Run("one instance", func(t *testing.T) { redisOutageDuringTurns(t, 1) })
}

// redisOutageDuringTurns runs the scenario of
// TestAttackRedisOutageLongerThanLease with n gateways (1 or 2); the
// turns run on the first.
func redisOutageDuringTurns(t *testing.T, n int) {
	r := startPersistentRedis(t)
	site := "a2a {\n\tcard {\n\t\tname outage-lease\n\t}\n\tbackend echo {\n\t\tdelay 100ms\n\t\tchunks 60\n\t}\n}"
	gws := harness.StartRedisGateways(t, r.Addr, n, site, harness.Options{}, "instance_lease 2s")
	ga := gws[0]
	longPrompt := strings.Repeat("long turn ", 8) // about 6 s of chunks

	s, streamID, _ := startOnA(t, ga.URL, longPrompt)
	blocking := make(chan map[string]any, 1)
	go func() {
		res, err := harness.At(ga.URL).Try("SendMessage", map[string]any{"message": protoMsg(longPrompt, "", "")})
		if err != nil {
			t.Logf("blocking SendMessage: %v", err)
			blocking <- nil
			return
		}
		task, _ := res["task"].(map[string]any)
		blocking <- task
	}()
	time.Sleep(time.Second)
	r.Stop()
	down := time.Now()
	time.Sleep(4 * time.Second)
	for _, g := range gws {
		select {
		case <-g.Exited():
			t.Fatalf("gateway %s exited during the outage:\n%s", g.URL, g.Output())
		default:
		}
	}
	r.Start()
	t.Logf("Redis was down %v (instance_lease 2s)", time.Since(down).Round(100*time.Millisecond))

	rest := s.RestEvents(30 * time.Second)
	last := ""
	if len(rest) > 0 {
		last = eventStateOf(rest[len(rest)-1])
	}
	t.Logf("stream on A after the outage: %d more events, last state %q", len(rest), last)
	var blockingID, blockingState string
	select {
	case task := <-blocking:
		if task != nil {
			blockingID, _ = task["id"].(string)
			blockingState = harness.TaskState(task)
			t.Logf("blocking SendMessage answered %s", blockingState)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking SendMessage did not answer within 30 s of Redis coming back")
	}
	told := map[string]string{streamID: last}
	if blockingID != "" {
		told[blockingID] = blockingState
	}
	for id, answered := range told {
		for _, g := range gws {
			var state string
			if !waitFor(t, 30*time.Second, func() bool {
				res, err := harness.At(g.URL).Try("GetTask", map[string]any{"id": id})
				state = harness.TaskState(res)
				return err == nil && settled(state)
			}) {
				t.Fatalf("task %s on %s 30 s after Redis came back: %q, want it settled (not stuck WORKING)", id, g.URL, state)
			}
			t.Logf("task %s on %s: %s", id, g.URL, state)
			// What the caller was told is what is stored: a turn whose
			// final write a reaper beat reports the reaper's state.
			if state != answered {
				t.Errorf("task %s: the caller was told %s, the store holds %s", id, answered, state)
			}
		}
	}
	for _, g := range gws {
		task := scaleSend(t, g.URL, protoMsg("after", "", ""))
		if harness.TaskState(task) != "TASK_STATE_INPUT_REQUIRED" {
			t.Fatalf("a new turn on %s after the outage: %v", g.URL, task)
		}
		if strings.Contains(g.Output(), "panic") {
			t.Fatalf("gateway %s panicked:\n%s", g.URL, g.Output())
		}
	}
}
