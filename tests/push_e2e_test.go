package tests

// End-to-end push notification tests with the built binary
// (PUSH-1..7): a real webhook receiver, both queues, dead letters and the
// `caddy a2a push dead` CLI.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// pushHit is one request the receiver got.
type pushHit struct {
	Path, DeliveryID, Token, TokenNoX, Auth, ContentType string
	Body                                                 map[string]any
	At                                                   time.Time
}

// pushReceiver is a webhook receiver whose answer depends on the path:
// /ok → 200; /flaky → 503 for the first two attempts of a delivery id, then
// 200; /bad → 400 until fixed; anything else 200.
type pushReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	hit []pushHit
	per map[string]int // path|delivery id → attempts
	fix bool           // /bad answers 200
}

func newPushReceiver(t *testing.T) *pushReceiver {
	r := &pushReceiver{per: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		h := pushHit{Path: req.URL.Path, DeliveryID: req.Header.Get("X-A2A-Delivery-Id"), Token: req.Header.Get("X-A2A-Notification-Token"),
			TokenNoX: req.Header.Get("A2A-Notification-Token"), Auth: req.Header.Get("Authorization"), ContentType: req.Header.Get("Content-Type"), Body: body, At: time.Now()}
		r.mu.Lock()
		r.hit = append(r.hit, h)
		k := req.URL.Path + "|" + h.DeliveryID
		r.per[k]++
		n, fix := r.per[k], r.fix
		r.mu.Unlock()
		switch {
		case strings.HasPrefix(req.URL.Path, "/flaky") && n <= 2:
			w.WriteHeader(http.StatusServiceUnavailable)
		case strings.HasPrefix(req.URL.Path, "/bad") && !fix:
			w.WriteHeader(http.StatusBadRequest)
		default:
			w.WriteHeader(http.StatusOK)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *pushReceiver) hits(path string) []pushHit {
	return lockedFilter(&r.mu, &r.hit, func(h pushHit) bool { return h.Path == path })
}

// waitHits waits until path got at least n requests.
func (r *pushReceiver) waitHits(t *testing.T, path string, n int, within time.Duration) []pushHit {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if hs := r.hits(path); len(hs) >= n {
			return hs
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s: want %d requests within %v, got %d", path, n, within, len(r.hits(path)))
	return nil
}

// pushSend sends a message with an inline push config and returns the task;
// opts tune the request (e.g. harness.Client).
func pushSend(t *testing.T, gw string, cfg map[string]any, opts ...harness.Option) map[string]any {
	t.Helper()
	params := map[string]any{
		"message":       map[string]any{"role": "ROLE_USER", "messageId": fmt.Sprint(time.Now().UnixNano()), "parts": []any{map[string]any{"text": "hello"}}},
		"configuration": map[string]any{"taskPushNotificationConfig": cfg},
	}
	return harness.At(gw).SendTask(t, params, opts...)
}

func pushSite(queueBlock string) string {
	return `a2a {
	card {
		name push-test
	}
	push {
		` + queueBlock + `
		allow_private_networks 127.0.0.0/8
		max_attempts 3
		retry_initial 100ms
		retry_max 300ms
		timeout 2s
	}
}`
}

func closedPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return p
}

func TestPushE2E(t *testing.T) {
	t.Parallel()
	// local-file over SQLite, redis-streams, and local-file over `store
	// redis` (the outbox in Redis; the CLI reads it with --store-redis).
	for _, q := range []string{"local-file", "redis-streams", "store-redis"} {
		t.Run(q, func(t *testing.T) {
			block, cliFlags, opts := "queue local-file", []string{}, harness.Options{}
			switch q {
			case "redis-streams":
				addr := harness.StartRedis(t)
				block = "queue redis-streams {\n\t\t\tredis_url redis://" + addr + "/0\n\t\t\tlease_timeout_ms 2000\n\t\t}"
				cliFlags = []string{"--queue", "redis-streams", "--redis-url", "redis://" + addr + "/0"}
			case "store-redis":
				addr := harness.StartRedis(t)
				opts.Global = "a2a {\n\tdata_dir {{DIR}}/data\n\tstore redis {\n\t\turl redis://" + addr + "/0\n\t\tkey_prefix pe2e:\n\t}\n}"
				cliFlags = []string{"--store-redis", "redis://" + addr + "/0", "--key-prefix", "pe2e:"}
			}
			recv := newPushReceiver(t)
			gw := harness.StartGatewayWith(t, pushSite(block), opts)
			cliFlags = append(cliFlags, "--data-dir", gw.Dir+"/data")

			// The card advertises push (PUSH-1).
			_, card := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
			if !strings.Contains(string(card), `"pushNotifications":true`) {
				t.Fatalf("card does not advertise pushNotifications: %s", card)
			}

			// input-required → body, token headers, Authorization, delivery id (PUSH-4).
			task := pushSend(t, gw.URL, map[string]any{"url": recv.srv.URL + "/ok", "token": "tok-1",
				"authentication": map[string]any{"scheme": "Bearer", "credentials": "cred-1"}})
			if st := bkState(map[string]any{"task": task}); st != "TASK_STATE_INPUT_REQUIRED" {
				t.Logf("task state %v", task["status"])
			}
			h := recv.waitHits(t, "/ok", 1, 10*time.Second)[0]
			su, _ := h.Body["statusUpdate"].(map[string]any)
			if su == nil || su["taskId"] != task["id"] || bkStr(su, "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
				t.Fatalf("body: %v", h.Body)
			}
			if h.Token != "tok-1" || h.TokenNoX != "tok-1" || h.Auth != "Bearer cred-1" || h.DeliveryID == "" || h.ContentType != "application/json" {
				t.Fatalf("headers: %+v", h)
			}

			// The config reads back with the task id as its id (PUSH-1).
			got, rerr := harness.At(gw.URL).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": task["id"], "id": task["id"]})
			if rerr != nil || got["url"] != recv.srv.URL+"/ok" || got["token"] != "tok-1" {
				t.Fatalf("get config: %v %v", got, rerr)
			}

			// 503, 503, 200 → three attempts of one delivery id, one success.
			pushSend(t, gw.URL, map[string]any{"url": recv.srv.URL + "/flaky"})
			hs := recv.waitHits(t, "/flaky", 3, 10*time.Second)
			time.Sleep(800 * time.Millisecond) // sleep: room for a fourth attempt, which must not come
			hs = recv.hits("/flaky")
			if len(hs) != 3 || hs[0].DeliveryID != hs[2].DeliveryID {
				t.Fatalf("flaky: want 3 attempts of one delivery, got %d", len(hs))
			}

			// 400 → dead letter at once.
			pushSend(t, gw.URL, map[string]any{"url": recv.srv.URL + "/bad"})
			recv.waitHits(t, "/bad", 1, 10*time.Second)
			// Unreachable → dead after max attempts (3).
			unreach := fmt.Sprintf("http://127.0.0.1:%d/gone", closedPort(t))
			pushSend(t, gw.URL, map[string]any{"url": unreach})

			var out string
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				out, _ = harness.Run(t, gw.Dir, append([]string{"a2a", "push", "dead", "list"}, cliFlags...)...)
				if strings.Count(out, "\n") >= 2 {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 {
				t.Fatalf("dead list: want 2 lines, got:\n%s", out)
			}
			if len(recv.hits("/bad")) != 1 {
				t.Fatalf("400 must not be retried: %d attempts", len(recv.hits("/bad")))
			}
			var badID string
			for _, l := range lines {
				f := strings.Split(l, "\t")
				switch {
				case strings.Contains(l, "receiver answered 400") && strings.Contains(l, "attempts=1"):
					badID = f[0]
				case strings.Contains(l, "attempts exhausted") && strings.Contains(l, "attempts=3"):
				default:
					t.Fatalf("unexpected dead letter line %q", l)
				}
				if strings.Contains(l, "tok-") || strings.Contains(l, "cred-") {
					t.Fatalf("dead list leaks a secret: %q", l)
				}
			}
			if badID == "" || badID != recv.hits("/bad")[0].DeliveryID {
				t.Fatalf("dead list does not name the 400 delivery %q:\n%s", recv.hits("/bad")[0].DeliveryID, out)
			}

			// Requeue from dead: the receiver now accepts it, with the same delivery id.
			recv.mu.Lock()
			recv.fix = true
			recv.mu.Unlock()
			if out, err := harness.Run(t, gw.Dir, append([]string{"a2a", "push", "dead", "requeue", badID}, cliFlags...)...); err != nil || !strings.Contains(out, "requeued 1") {
				t.Fatalf("requeue: %v\n%s", err, out)
			}
			hs = recv.waitHits(t, "/bad", 2, 10*time.Second)
			if hs[1].DeliveryID != badID {
				t.Fatalf("requeued delivery id %q, want %q", hs[1].DeliveryID, badID)
			}
			out, _ = harness.Run(t, gw.Dir, append([]string{"a2a", "push", "dead", "list"}, cliFlags...)...)
			if strings.Contains(out, badID) || strings.Count(out, "\n") != 1 {
				t.Fatalf("after requeue the dead list should hold only the unreachable delivery:\n%s", out)
			}
		})
	}
}
