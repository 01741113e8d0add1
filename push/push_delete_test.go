package push

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Regression tests (PUSH-1): deleting a config drops its pending
// deliveries, also those the SQLite delete cannot reach: jobs already
// relayed to the Redis stream or parked in the retry set (PUSH-6), and a
// local-file job claimed before the delete (PUSH-5).

// switchReceiver answers 503 until ok is set, then 200; it records the
// bodies it accepted.
type switchReceiver struct {
	srv   *httptest.Server
	ok    atomic.Bool
	hits  atomic.Int64 // every request
	mu    sync.Mutex
	taken []string // bodies answered 200
}

func newSwitchReceiver(t *testing.T) *switchReceiver {
	r := &switchReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.hits.Add(1)
		if !r.ok.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		r.mu.Lock()
		r.taken = append(r.taken, string(b))
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *switchReceiver) accepted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.taken...)
}

// openStore opens a SQLite store in a temporary directory, closed when
// the test ends.
func openStore(tb testing.TB) *store.SQLite {
	tb.Helper()
	st, err := store.OpenSQLite(filepath.Join(tb.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

func putConfigAndTask(t *testing.T, st *store.SQLite, kr *KeyRing, url, taskID, configID, marker string) int {
	t.Helper()
	ctx := t.Context()
	tok, err := kr.Seal("tok", SecretAAD(taskID, configID, "token"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutPushConfig(ctx, store.PushConfig{Owner: "alice", TaskID: taskID, ID: configID, URL: url, Token: tok}); err != nil {
		t.Fatal(err)
	}
	task := &a2a.Task{ID: taskID, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
	payload := []byte(`{"statusUpdate":{"taskId":"` + taskID + `","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"metadata":{"m":"` + marker + `"}}}`)
	n, err := st.PutTaskWithJobs(ctx, "alice", task, payload)
	if err != nil || n != 1 {
		t.Fatalf("PutTaskWithJobs: %d %v", n, err)
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestRedisDeleteConfigDropsRelayedJobs: a delivery fails with 503 and sits
// in the Redis retry set (the outbox row is gone: relayed); the config is
// deleted; then the receiver answers 200 and must get nothing within
// several retry intervals, and the job is dropped without a dead letter.
// With "recreated", a config with the same id is stored again right after
// the delete: the old job is still dropped, the new config's job is sent.
func TestRedisDeleteConfigDropsRelayedJobs(t *testing.T) {
	for _, recreate := range []bool{false, true} {
		name := "deleted"
		if recreate {
			name = "recreated"
		}
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			addr := startRedis(t)
			st := openStore(t)
			kr, _ := NewKeyRing()
			rcv := newSwitchReceiver(t)
			rq, err := OpenRedisQueue(RedisOptions{URL: "redis://" + addr}, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer rq.Close()
			const interval = 150 * time.Millisecond
			e := NewEngine(rq, kr, 4, Settings{Policy: &Policy{Allow: mustPrefixes("127.0.0.0/8")},
				Retry: RetryPolicy{Initial: interval, Max: interval, Jitter: 0.01, MaxAttempts: 1000}}, nil)
			e.Enqueued(putConfigAndTask(t, st, kr, rcv.srv.URL+"/hook", "t1", "cfg", "old"))
			if err := e.Start(ctx); err != nil {
				t.Fatal(err)
			}
			defer e.Stop(10 * time.Second)

			// Two failed attempts: the job went through the retry set.
			waitFor(t, "two 503 answers", func() bool { return rcv.hits.Load() >= 2 })
			if d, _ := st.PushQueueDepth(ctx); d != 0 {
				t.Fatalf("outbox holds %d jobs: the job should be in Redis", d)
			}
			if err := st.DeletePushConfig(ctx, "alice", "t1", "cfg"); err != nil {
				t.Fatal(err)
			}
			// An attempt already past its config check may still be in
			// flight (its entry pending in the stream); the next one finds
			// the config gone and drops the job. Wait until the job is
			// neither in the stream nor in the retry set (read in one
			// MULTI: a promotion between two reads would hide it).
			waitFor(t, "the old job dropped", func() bool {
				pipe := rq.rdb.TxPipeline()
				xl := pipe.XLen(ctx, rq.opts.Stream)
				zc := pipe.ZCard(ctx, rq.opts.RetryKey)
				_, err := pipe.Exec(ctx)
				return err == nil && xl.Val()+zc.Val() == 0
			})
			if recreate {
				time.Sleep(5 * time.Millisecond) // sleep: a new millisecond for created_ms (elapsed time is tested)
				e.Enqueued(putConfigAndTask(t, st, kr, rcv.srv.URL+"/hook", "t1", "cfg", "new"))
			}
			rcv.ok.Store(true)
			time.Sleep(6 * interval) // sleep: room for deliveries of the deleted config, which must not come
			got := rcv.accepted()
			for _, b := range got {
				if strings.Contains(b, `"old"`) {
					t.Fatalf("a delivery of the deleted config was sent after the delete: %s", b)
				}
			}
			if recreate {
				waitFor(t, "the new config's delivery", func() bool { return len(rcv.accepted()) >= 1 })
				if got := rcv.accepted(); len(got) != 1 || !strings.Contains(got[0], `"new"`) {
					t.Fatalf("receiver got %q; want the new delivery once", got)
				}
			} else if len(got) != 0 {
				t.Fatalf("receiver got %d deliveries after the delete", len(got))
			}
			// Dropped, not parked or dead-lettered.
			waitFor(t, "an empty queue", func() bool { d, err := rq.Depth(ctx); return err == nil && d == 0 })
			if ds, _ := rq.ListDead(ctx, 10); len(ds) != 0 || e.stats.DeadLettered.Load() != 0 {
				t.Fatalf("dead letters: %+v", ds)
			}
		})
	}
}

// TestLocalDeleteConfigAfterClaim: a local-file job claimed before its
// config is deleted is not sent, and is neither retried nor dead-lettered.
func TestLocalDeleteConfigAfterClaim(t *testing.T) {
	ctx := t.Context()
	st := openStore(t)
	kr, _ := NewKeyRing()
	rcv := newSwitchReceiver(t)
	rcv.ok.Store(true)
	q := NewLocalQueue(st, 0)
	e := NewEngine(q, kr, 1, Settings{Policy: &Policy{Allow: mustPrefixes("127.0.0.0/8")}}, nil)
	putConfigAndTask(t, st, kr, rcv.srv.URL+"/hook", "t1", "cfg", "old")
	js, err := q.Claim(ctx, 10)
	if err != nil || len(js) != 1 {
		t.Fatalf("Claim: %v %v", js, err)
	}
	if err := st.DeletePushConfig(ctx, "alice", "t1", "cfg"); err != nil {
		t.Fatal(err)
	}
	e.deliver(ctx, js[0])
	if n := rcv.hits.Load(); n != 0 {
		t.Fatalf("receiver got %d requests for a deleted config", n)
	}
	if d, _ := q.Depth(ctx); d != 0 {
		t.Fatalf("queue depth %d", d)
	}
	if ds, _ := q.ListDead(ctx, 10); len(ds) != 0 {
		t.Fatalf("dead letters: %+v", ds)
	}

	// A live config is still delivered.
	putConfigAndTask(t, st, kr, rcv.srv.URL+"/hook", "t2", "cfg", "live")
	js, _ = q.Claim(ctx, 10)
	if len(js) != 1 {
		t.Fatalf("Claim: %v", js)
	}
	e.deliver(ctx, js[0])
	if got := rcv.accepted(); len(got) != 1 || !strings.Contains(got[0], `"live"`) {
		t.Fatalf("receiver got %q", got)
	}
}
