package push

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// startRedis runs a throwaway redis-server on a free loopback port and
// returns its address; the test fails (not skips) without redis-server.
func startRedis(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server is required: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", tb.TempDir())
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for range 100 {
		if c.Ping(context.Background()).Err() == nil {
			return addr
		}
		time.Sleep(30 * time.Millisecond)
	}
	tb.Fatal("redis-server did not answer")
	return ""
}

// TestRedisPromoteAtomic: four workers promote the same due retries at
// once; each retry reaches the stream exactly once (PUSH-6).
func TestRedisPromoteAtomic(t *testing.T) {
	addr := startRedis(t)
	ctx := t.Context()
	var qs []*RedisQueue
	for i := range 4 {
		q, err := OpenRedisQueue(RedisOptions{URL: "redis://" + addr, Consumer: fmt.Sprint("c", i)}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Close()
		if err := q.Prepare(ctx); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	}
	const n = 300
	due := time.Now().Add(-time.Second)
	for i := range n {
		if err := qs[0].Retry(ctx, Job{ID: fmt.Sprint("d", i), handle: "0-1"}, due, "x"); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var moved atomic.Int64
	for _, q := range qs {
		wg.Go(func() {
			for range 5 {
				k, err := q.promote(ctx)
				if err != nil {
					t.Error(err)
				}
				moved.Add(int64(k))
			}
		})
	}
	wg.Wait()
	xl, _ := qs[0].rdb.XLen(ctx, DefaultStream).Result()
	zl, _ := qs[0].rdb.ZCard(ctx, DefaultRetryKey).Result()
	if moved.Load() != n || xl != n || zl != 0 {
		t.Fatalf("promoted %d, stream %d, retry set %d; want %d, %d, 0", moved.Load(), xl, zl, n, n)
	}
	// A future retry is not promoted.
	_ = qs[0].Retry(ctx, Job{ID: "later", handle: "0-1"}, time.Now().Add(time.Hour), "x")
	if k, _ := qs[1].promote(ctx); k != 0 {
		t.Fatalf("promoted a retry that is not due")
	}
}

// TestRedisReclaimAndDead: an entry read by a consumer that dies is claimed
// by another after the lease; dead letters are listed and requeued.
func TestRedisReclaimAndDead(t *testing.T) {
	addr := startRedis(t)
	ctx := t.Context()
	opts := RedisOptions{URL: "redis://" + addr, Lease: 300 * time.Millisecond}
	a, _ := OpenRedisQueue(withConsumer(opts, "a"), nil, nil)
	b, _ := OpenRedisQueue(withConsumer(opts, "b"), nil, nil)
	defer a.Close()
	defer b.Close()
	if err := a.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	a.rdb.XAdd(ctx, &redis.XAddArgs{Stream: DefaultStream, Values: []any{"job", `{"id":"j1","taskId":"t","configId":"c","url":"http://x/","payload":"e30="}`}})
	js, err := a.Claim(ctx, 10)
	if err != nil || len(js) != 1 || js[0].ID != "j1" {
		t.Fatalf("a.Claim: %v %v", js, err)
	}
	// a "dies" without acknowledging. b sees nothing new…
	if js, _ := b.Claim(ctx, 10); len(js) != 0 {
		t.Fatalf("b got %v before the lease", js)
	}
	time.Sleep(350 * time.Millisecond) // sleep: a's lease expires (lease expiry is tested)
	if err := b.reclaim(ctx); err != nil {
		t.Fatal(err)
	}
	js, err = b.Claim(ctx, 10)
	if err != nil || len(js) != 1 || js[0].ID != "j1" {
		t.Fatalf("b.Claim after lease: %v %v", js, err)
	}
	if err := b.Dead(ctx, js[0], "receiver answered 400"); err != nil {
		t.Fatal(err)
	}
	ds, err := b.ListDead(ctx, 10)
	if err != nil || len(ds) != 1 || ds[0].ID != "j1" || ds[0].Reason != "receiver answered 400" {
		t.Fatalf("ListDead: %+v %v", ds, err)
	}
	if n, err := b.Requeue(ctx, "j1"); n != 1 || err != nil {
		t.Fatalf("Requeue: %d %v", n, err)
	}
	if ds, _ := b.ListDead(ctx, 10); len(ds) != 0 {
		t.Fatalf("dead after requeue: %v", ds)
	}
	js, _ = a.Claim(ctx, 10)
	if len(js) != 1 || js[0].ID != "j1" || js[0].Attempts != 0 {
		t.Fatalf("requeued job: %+v", js)
	}
}

func withConsumer(o RedisOptions, c string) RedisOptions { o.Consumer = c; return o }

// benchReceiver answers 200 to everything.
func benchReceiver(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var buf [512]byte
		for {
			if _, err := r.Body.Read(buf[:]); err != nil {
				break
			}
		}
		w.WriteHeader(http.StatusOK)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// fillOutbox stores n tasks with one push config each and queues their
// deliveries, as finalize does.
func fillOutbox(b *testing.B, st *store.SQLite, kr *KeyRing, url string, n int) {
	ctx := context.Background()
	var wg sync.WaitGroup
	var next atomic.Int64
	for range 32 {
		wg.Go(func() {
			for {
				i := int(next.Add(1))
				if i > n {
					return
				}
				id := fmt.Sprintf("task-%d-%d", time.Now().UnixNano(), i)
				tok, _ := kr.Seal("tok", SecretAAD(id, id, "token"))
				if err := st.PutPushConfig(ctx, store.PushConfig{Owner: "", TaskID: id, ID: id, URL: url, Token: tok}); err != nil {
					b.Error(err)
					return
				}
				task := &a2a.Task{ID: id, ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted}}
				payload := []byte(`{"statusUpdate":{"taskId":"` + id + `","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`)
				if _, err := st.PutTaskWithJobs(ctx, "", task, payload); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkDeliveries measures deliveries per second to a local receiver on
// each queue, against a bare concurrent POST loop to the same receiver
// (baseline). Each op is one delivery; see the deliveries/s metric.
func BenchmarkDeliveries(b *testing.B) {
	const workers = 32
	body := []byte(`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`)
	b.Run("baseline-post-loop", func(b *testing.B) {
		srv := benchReceiver(b)
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
		var next atomic.Int64
		var wg sync.WaitGroup
		b.ResetTimer()
		start := time.Now()
		for range workers {
			wg.Go(func() {
				for next.Add(1) <= int64(b.N) {
					resp, err := client.Post(srv.URL, "application/json", bytes.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
	})
	for _, kind := range []string{"local-file", "redis-streams"} {
		b.Run(kind, func(b *testing.B) {
			srv := benchReceiver(b)
			st := openStore(b)
			kr, _ := NewKeyRing()
			fillOutbox(b, st, kr, srv.URL+"/hook", b.N)
			var q Queue = NewLocalQueue(st, 0)
			if kind == "redis-streams" {
				rq, err := OpenRedisQueue(RedisOptions{URL: "redis://" + startRedis(b)}, st, nil)
				if err != nil {
					b.Fatal(err)
				}
				defer rq.Close()
				q = rq
			}
			e := NewEngine(q, kr, workers, Settings{Policy: &Policy{Allow: mustPrefixes("127.0.0.0/8")}}, nil)
			b.ResetTimer()
			start := time.Now()
			if err := e.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
			for e.stats.Delivered.Load() < int64(b.N) {
				if e.stats.DeadLettered.Load() > 0 {
					b.Fatalf("dead letters in the benchmark")
				}
				time.Sleep(time.Millisecond)
			}
			el := time.Since(start)
			b.StopTimer()
			_ = e.Stop(10 * time.Second)
			b.ReportMetric(float64(b.N)/el.Seconds(), "deliveries/s")
			if d, _ := q.Depth(context.Background()); d != 0 && !strings.HasPrefix(kind, "redis") {
				b.Fatalf("outbox not empty: %d", d)
			}
		})
	}
}
