package tests

// Liveness across instances (SCALE-2, RPC-12): an instance killed mid-turn
// leaves its task WORKING until its lease ends; then another instance
// marks it FAILED with the crash message, and a stream following the turn
// there ends with that FAILED update.

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestRedisKilledInstanceTasksFail (SCALE-2, RPC-12, SCALE-4): kill -9 A
// mid-turn; B keeps the task WORKING while A's lease runs, then stores it
// FAILED with the crash message; B's SubscribeToTask on the turn ends
// with the FAILED status update.
func TestRedisKilledInstanceTasksFail(t *testing.T) {
	const lease = 3 * time.Second
	addr := harness.StartRedis(t)
	global := "a2a {\n\tdata_dir {{DIR}}/a2a-data\n\tstore redis {\n\t\turl redis://" + addr + "/0\n\t\tkey_prefix e2e:\n\t\tinstance_lease 3s\n\t}\n}"
	site := "a2a {\n\tcard {\n\t\tname liveness\n\t}\n\tbackend echo {\n\t\tdelay 1s\n\t\tchunks 30\n\t}\n}"
	ga := harness.StartGatewayWith(t, site, harness.Options{Global: global})
	gb := harness.StartGatewayWith(t, site, harness.Options{Global: global})

	_, taskID, _ := startOnA(t, ga.URL, "die mid-turn")
	follow := harness.StreamRPC(t, gb.URL, "", "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("f1"))
	if ev, ok := follow.NextEvent(30 * time.Second); !ok || ev.Map["task"] == nil {
		t.Fatalf("SubscribeToTask on B: %v, %v; want the Task first", ev.Map, ok)
	}
	ga.Kill()
	killed := time.Now()

	state := func() (string, string) {
		got, rerr := harness.RPC(t, gb.URL, "", "GetTask", map[string]any{"id": taskID})
		if rerr != nil {
			t.Fatalf("GetTask on B: %v", rerr)
		}
		st := got["status"].(map[string]any)
		text := ""
		if m, ok := st["message"].(map[string]any); ok {
			if parts, ok := m["parts"].([]any); ok && len(parts) > 0 {
				text, _ = parts[0].(map[string]any)["text"].(string)
			}
		}
		return st["state"].(string), text
	}
	if st, _ := state(); st != "TASK_STATE_WORKING" {
		t.Fatalf("right after the kill the task is %s on B; want WORKING until A's lease ends", st)
	}
	var st, text string
	for time.Since(killed) < lease+15*time.Second {
		if st, text = state(); st != "TASK_STATE_WORKING" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	failedAfter := time.Since(killed)
	if st != "TASK_STATE_FAILED" || !strings.Contains(text, "did not finish") {
		t.Fatalf("after A's lease the task is %s (%q) on B; want FAILED with the crash message", st, text)
	}
	t.Logf("task FAILED %v after the kill (lease %v)", failedAfter, lease)

	rest := follow.RestEvents(30 * time.Second)
	if len(rest) == 0 || eventStateOf(rest[len(rest)-1]) != "TASK_STATE_FAILED" {
		t.Fatalf("B's stream after the kill: %v; want it to end with FAILED", sseStates(rest))
	}
}
