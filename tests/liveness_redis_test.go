package tests

// Liveness across instances (SCALE-2, RPC-12): an instance killed mid-turn
// leaves its task WORKING until its lease ends; then another instance
// marks it FAILED with the crash message, and a stream following the turn
// there ends with that FAILED update.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestRedisKilledInstanceTasksFail (SCALE-2, RPC-12, SCALE-4): kill -9 A
// mid-turn; B keeps the task WORKING while A's lease runs, then stores it
// FAILED with the crash message; B's SubscribeToTask on the turn ends
// with the FAILED status update, and the task's push receiver gets the
// FAILED notification once (per delivery id).
func TestRedisKilledInstanceTasksFail(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second
	addr := harness.StartRedis(t)
	recv := newStateReceiver(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	ring := fmt.Sprintf(`{"active":"k1","keys":[{"id":"k1","key":%q}]}`, base64.StdEncoding.EncodeToString(key))
	site := "a2a {\n\tcard {\n\t\tname liveness\n\t}\n\tbackend echo {\n\t\tdelay 1s\n\t\tchunks 30\n\t}\n\tpush {\n\t\tallow_private_networks 127.0.0.0/8\n\t\tretry_initial 100ms\n\t}\n}"
	gws := harness.StartRedisGateways(t, addr, 2, site, harness.Options{Env: []string{"A2A_PUSH_KEYRING=" + ring}}, "instance_lease 3s")
	ga, gb := gws[0], gws[1]

	sa := harness.At(ga.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": protoMsg("die mid-turn", "", ""),
		"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": recv.srv.URL + "/hook", "token": "t"}}}, harness.ID("s1"))
	ev, ok := sa.NextEvent(30 * time.Second)
	if !ok || ev.Map["task"] == nil {
		t.Fatalf("turn on A: %v %v", ev.Map, ok)
	}
	taskID := ev.Map["task"].(map[string]any)["id"].(string)
	for range 2 { // WORKING, the first chunk
		if _, ok := sa.NextEvent(30 * time.Second); !ok {
			t.Fatal("turn on A ended early")
		}
	}
	follow := harness.At(gb.URL).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("f1"))
	if ev, ok := follow.NextEvent(30 * time.Second); !ok || ev.Map["task"] == nil {
		t.Fatalf("SubscribeToTask on B: %v, %v; want the Task first", ev.Map, ok)
	}
	ga.Kill()
	killed := time.Now()

	state := func() (string, string) {
		got, rerr := harness.At(gb.URL).RPC(t, "GetTask", map[string]any{"id": taskID})
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
	if !waitFor(t, 20*time.Second, func() bool { return recv.count(taskID, "TASK_STATE_FAILED") > 0 }) {
		t.Fatal("the push receiver got no FAILED notification")
	}
	time.Sleep(time.Second) // sleep: a duplicate would come now, and must not
	if dup := recv.duplicates(); dup != 0 {
		t.Errorf("%d delivery ids arrived more than once", dup)
	}
}

// stateReceiver is a push receiver that counts notifications by task and
// state, and requests per delivery id.
type stateReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	per map[string]int // task id + " " + state → notifications
	ids map[string]int // delivery id → requests
}

func newStateReceiver(t *testing.T) *stateReceiver {
	r := &stateReceiver{per: map[string]int{}, ids: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var body struct {
			StatusUpdate struct {
				TaskID string `json:"taskId"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"statusUpdate"`
		}
		_ = json.Unmarshal(b, &body)
		r.mu.Lock()
		r.per[body.StatusUpdate.TaskID+" "+body.StatusUpdate.Status.State]++
		r.ids[req.Header.Get("X-A2A-Delivery-Id")]++
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *stateReceiver) count(taskID, state string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.per[taskID+" "+state]
}

func (r *stateReceiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.ids {
		if c > 1 {
			n++
		}
	}
	return n
}
