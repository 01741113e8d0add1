package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// BenchmarkIdleStreams holds b.N SendStreamingMessage SSE streams open on
// turns that wait (echo backend, 1 h delay), over real loopback HTTP/1.1
// connections to the JSON-RPC binding, and reports what each costs the
// process once they are all open: goroutines, stack and live heap bytes
// per stream (issue 17: 10,000 idle streams). Run with -benchtime 2000x.
func BenchmarkIdleStreams(b *testing.B) {
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	h := NewHTTPHandler(NewService(hub, Config{Backend: backend.EchoBackend{Chunks: 1, Delay: time.Hour}, MaxConcurrentTurns: 1 << 20}), TransportConfig{KeepAlive: 30 * time.Second})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "bench") }))
	b.Cleanup(func() { _ = hub.Close(); srv.Close(); _ = st.Close() })
	addr := strings.TrimPrefix(srv.URL, "http://")

	g0, stack0, heap0 := idleFootprint()
	conns := make([]net.Conn, 0, b.N)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		conns = append(conns, c)
		body := bytes.Replace(benchStreamBody, []byte(`"messageId":"m1"`), []byte(`"messageId":"idle`+strconv.FormatInt(benchMsgSeq.Add(1), 10)+`"`), 1)
		if _, err := fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nA2A-Version: 1.0\r\nContent-Length: %d\r\n\r\n%s", addr, len(body), body); err != nil {
			b.Fatal(err)
		}
	}
	// Every stream has sent its first event (the Task) and its WORKING
	// update: the turn is waiting in the backend.
	buf := make([]byte, 4096)
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
		var got []byte
		for bytes.Count(got, []byte("data: ")) < 2 {
			n, err := c.Read(buf)
			if err != nil {
				b.Fatalf("stream: %v after %q", err, got)
			}
			got = append(got, buf[:n]...)
		}
	}
	b.StopTimer()
	time.Sleep(500 * time.Millisecond) // sleep: a benchmark lets queued store writes drain before measuring
	g1, stack1, heap1 := idleFootprint()
	n := float64(b.N)
	b.ReportMetric(float64(g1-g0)/n, "goroutines/stream")
	b.ReportMetric(float64(stack1-stack0)/n, "stack-B/stream")
	b.ReportMetric(float64(heap1-heap0)/n, "heap-B/stream")
}

// countingListener counts the writes to the connections it accepts.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// idleFootprint returns the goroutine count, the stack bytes in use and the
// live heap bytes, after a few collections (which also shrink stacks).
func idleFootprint() (int, uint64, uint64) {
	var ms runtime.MemStats
	for i := 0; i < 4; i++ {
		runtime.GC()
	}
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.StackInuse, ms.HeapAlloc
}

// BenchmarkIdleTurns is BenchmarkIdleStreams without HTTP: b.N streamed
// turns waiting in the backend, each stream read to its WORKING update and
// then left open, so what is reported is the turn's own share of an idle
// stream.
func BenchmarkIdleTurns(b *testing.B) {
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	svc := NewService(hub, Config{Backend: backend.EchoBackend{Chunks: 1, Delay: time.Hour}, MaxConcurrentTurns: 1 << 20})
	b.Cleanup(func() { _ = hub.Close(); _ = st.Close() })
	g0, stack0, heap0 := idleFootprint()
	streams := make([]Stream, 0, b.N)
	defer func() {
		for _, s := range streams {
			s.Close()
		}
	}()
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "turn" + strconv.FormatInt(benchMsgSeq.Add(1), 10), Role: a2a.RoleUser,
			Parts: []a2a.Part{a2a.TextPart("wait")}}}
		s, err := svc.SendStreamingMessage(ctx, Call{Principal: "bench", Version: "1.0"}, req)
		if err != nil {
			b.Fatal(err)
		}
		streams = append(streams, s)
		for j := 0; j < 2; j++ { // the Task, then WORKING
			if _, ok := s.Next(ctx); !ok {
				b.Fatal("stream ended")
			}
		}
	}
	b.StopTimer()
	time.Sleep(500 * time.Millisecond) // sleep: a benchmark lets queued store writes drain before measuring
	g1, stack1, heap1 := idleFootprint()
	n := float64(b.N)
	b.ReportMetric(float64(g1-g0)/n, "goroutines/stream")
	b.ReportMetric(float64(stack1-stack0)/n, "stack-B/stream")
	b.ReportMetric(float64(heap1-heap0)/n, "heap-B/stream")
}

// BenchmarkStreamOverHTTP measures a SendStreamingMessage over a real
// loopback HTTP/1.1 connection (keep-alive, 16 parallel clients) read to
// its last SSE event: echo backend (3 chunks), durable store. The process
// CPU per stream (cpu-µs/op) includes the client's share and the writes
// of the SSE frames.
func BenchmarkStreamOverHTTP(b *testing.B) {
	h := benchHandler(b)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "bench") }))
	var writes atomic.Int64
	srv.Listener = countingListener{Listener: srv.Listener, writes: &writes}
	srv.Start()
	b.Cleanup(srv.Close)
	defer func() { b.ReportMetric(float64(writes.Load())/float64(b.N), "writes/stream") }()
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	b.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	defer cpuPerOp(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			body := bytes.Replace(benchStreamBody, []byte(`"messageId":"m1"`), []byte(`"messageId":"h`+strconv.FormatInt(benchMsgSeq.Add(1), 10)+`"`), 1)
			req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			got, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || !bytes.Contains(got, []byte("TASK_STATE_INPUT_REQUIRED")) {
				b.Fatalf("stream: %v %s", err, got)
			}
		}
	})
}
