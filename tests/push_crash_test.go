package tests

// Crash safety of push delivery (PUSH-5, PUSH-6): deliveries in flight
// survive kill -9; two gateways share one Redis consumer group.

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// gatedReceiver holds every request until opened, then answers 200 after
// delay. It counts requests per task id and remembers which gateway port
// delivered nothing (it cannot tell), only totals.
type gatedReceiver struct {
	srv   *httptest.Server
	gate  chan struct{}
	once  sync.Once
	delay time.Duration
	mu    sync.Mutex
	per   map[string]int // task id → requests
	ids   map[string]int // delivery id → requests
	total atomic.Int64
}

func newGatedReceiver(t *testing.T, delay time.Duration) *gatedReceiver {
	r := &gatedReceiver{gate: make(chan struct{}), delay: delay, per: map[string]int{}, ids: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		<-r.gate
		time.Sleep(r.delay) // sleep: a slow receiver; the delay is the test's input
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var body struct {
			StatusUpdate struct {
				TaskID string `json:"taskId"`
			} `json:"statusUpdate"`
		}
		_ = json.Unmarshal(b, &body)
		r.mu.Lock()
		r.per[body.StatusUpdate.TaskID]++
		r.ids[req.Header.Get("X-A2A-Delivery-Id")]++
		r.mu.Unlock()
		r.total.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() { r.open(); r.srv.Close() })
	return r
}

func (r *gatedReceiver) open() { r.once.Do(func() { close(r.gate) }) }

// unique counts distinct task ids received among want.
func (r *gatedReceiver) unique(want []string) (got int, missing []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range want {
		if r.per[id] > 0 {
			got++
		} else {
			missing = append(missing, id)
		}
	}
	return got, missing
}

// sendMany creates n tasks, each with an inline push config to url, with
// 16 concurrent clients, and returns their ids.
func sendMany(t *testing.T, gw string, n int, url string) []string {
	t.Helper()
	ids := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Value
	for range 16 {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				params := map[string]any{
					"message":       map[string]any{"role": "ROLE_USER", "messageId": fmt.Sprintf("m-%d-%d", time.Now().UnixNano(), i), "parts": []any{map[string]any{"text": "x"}}},
					"configuration": map[string]any{"taskPushNotificationConfig": map[string]any{"url": url, "token": "t"}},
				}
				res, rerr := harness.At(gw).Try("SendMessage", params)
				if rerr != nil {
					failed.Store(rerr.Error())
					return
				}
				task, _ := res["task"].(map[string]any)
				ids[i], _ = task["id"].(string)
			}
		})
	}
	wg.Wait()
	if v := failed.Load(); v != nil {
		t.Fatalf("SendMessage: %v", v)
	}
	return ids
}

// TestPushCrashSafety: 1,000 deliveries queued, the gateway killed with
// SIGKILL mid-way and restarted → every delivery arrives at least once.
func TestPushCrashSafety(t *testing.T) {
	t.Parallel()
	const n = 1000
	for _, q := range []string{"local-file", "redis-streams"} {
		t.Run(q, func(t *testing.T) {
			block := "queue local-file\n\t\tlease 2s"
			if q == "redis-streams" {
				addr := harness.StartRedis(t)
				block = "queue redis-streams {\n\t\t\tredis_url redis://" + addr + "/0\n\t\t\tlease_timeout_ms 2000\n\t\t}"
			}
			recv := newGatedReceiver(t, 5*time.Millisecond)
			gw := harness.StartGateway(t, `a2a {
	card {
		name crash
	}
	push {
		`+block+`
		allow_private_networks 127.0.0.0/8
		timeout 30s
		retry_initial 100ms
		retry_max 500ms
	}
}`)
			ids := sendMany(t, gw.URL, n, recv.srv.URL+"/hook")
			recv.open()
			if !waitFor(t, 30*time.Second, func() bool { got, _ := recv.unique(ids); return got >= n/3 }) {
				t.Fatalf("deliveries did not start")
			}
			got, _ := recv.unique(ids)
			gw.Kill()
			t.Logf("%s: killed with SIGKILL after %d of %d deliveries", q, got, n)
			if got >= n {
				t.Fatalf("all deliveries done before the kill: the test proves nothing")
			}
			gw.Restart()
			ok := waitFor(t, 60*time.Second, func() bool { got, _ := recv.unique(ids); return got == n })
			got, missing := recv.unique(ids)
			total := recv.total.Load()
			t.Logf("%s: %d/%d task deliveries received after restart; %d requests in total, %d duplicates", q, got, n, total, total-int64(got))
			if !ok {
				t.Fatalf("lost deliveries: %d missing, e.g. %v", len(missing), missing[:min(5, len(missing))])
			}
		})
	}
}

// TestPushTwoGatewaysOneGroup: two processes share a consumer group; each
// job is delivered once in normal operation; after one is killed its
// pending jobs are claimed by the other after the lease.
func TestPushTwoGatewaysOneGroup(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	ring := fmt.Sprintf(`{"active":"k1","keys":[{"id":"k1","key":%q}]}`, base64.StdEncoding.EncodeToString(key))
	site := `a2a {
	card {
		name pair
	}
	push {
		queue redis-streams {
			redis_url redis://` + addr + `/0
			lease_timeout_ms 1500
		}
		allow_private_networks 127.0.0.0/8
		timeout 30s
		workers 4
	}
}`
	opts := harness.Options{Env: []string{"A2A_PUSH_KEYRING=" + ring}}
	a := harness.StartGatewayWith(t, site, opts)
	b := harness.StartGatewayWith(t, site, opts)

	// Normal operation: 200 jobs, created on both, each delivered once.
	recv := newGatedReceiver(t, 0)
	recv.open()
	ids := append(sendMany(t, a.URL, 100, recv.srv.URL+"/n"), sendMany(t, b.URL, 100, recv.srv.URL+"/n")...)
	if !waitFor(t, 20*time.Second, func() bool { got, _ := recv.unique(ids); return got == len(ids) }) {
		got, _ := recv.unique(ids)
		t.Fatalf("normal operation: %d/%d delivered", got, len(ids))
	}
	time.Sleep(500 * time.Millisecond) // sleep: room for a duplicate, which must not come
	recv.mu.Lock()
	for _, id := range ids {
		if recv.per[id] != 1 {
			recv.mu.Unlock()
			t.Fatalf("task %s delivered %d times, want once", id, recv.per[id])
		}
	}
	recv.mu.Unlock()

	// Kill A while it holds unacknowledged entries: B takes them after the lease.
	slow := newGatedReceiver(t, 0)
	ids2 := sendMany(t, a.URL, 60, slow.srv.URL+"/k")
	// Wait until A has relayed every job from its own outbox to the shared
	// stream (a job left in A's outbox dies with A): then both consumers
	// hold up to 4 entries each, blocked in the receiver, and the rest wait
	// in the stream.
	rdb := rrpcClient(t, addr)
	if !waitFor(t, 20*time.Second, func() bool { return streamHolds(t, rdb, "iac-code:a2a:push", ids2) }) {
		t.Fatalf("gateway A did not relay its %d jobs to the stream (%d entries)", len(ids2), rdb.XLen(t.Context(), "iac-code:a2a:push").Val())
	}
	a.Kill()
	killedAt := time.Now()
	slow.open()
	if !waitFor(t, 30*time.Second, func() bool { got, _ := slow.unique(ids2); return got == len(ids2) }) {
		got, missing := slow.unique(ids2)
		t.Fatalf("after killing A: %d/%d delivered; missing e.g. %v", got, len(ids2), missing[:min(3, len(missing))])
	}
	t.Logf("after SIGKILL of one gateway all %d deliveries arrived within %v (lease 1.5s); %d requests (%d duplicates)",
		len(ids2), time.Since(killedAt).Round(100*time.Millisecond), slow.total.Load(), slow.total.Load()-int64(len(ids2)))
}

// streamHolds reports whether the push stream holds a job for every task
// in ids (entries stay in the stream until acknowledged).
func streamHolds(t *testing.T, rdb *redis.Client, stream string, ids []string) bool {
	t.Helper()
	msgs, err := rdb.XRange(t.Context(), stream, "-", "+").Result()
	if err != nil {
		return false
	}
	in := map[string]bool{}
	for _, m := range msgs {
		var j struct {
			TaskID string `json:"taskId"`
		}
		if s, ok := m.Values["job"].(string); ok && json.Unmarshal([]byte(s), &j) == nil {
			in[j.TaskID] = true
		}
	}
	for _, id := range ids {
		if !in[id] {
			return false
		}
	}
	return true
}
