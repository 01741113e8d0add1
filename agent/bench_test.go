package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// benchHandler returns a handler over a fresh durable SQLite store.
func benchHandler(b *testing.B) HTTPHandler {
	b.Helper()
	st, err := store.OpenSQLite(filepath.Join(b.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		b.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = hub.Close(); _ = st.Close() })
	return NewHTTPHandler(NewService(hub, Config{Backend: backend.EchoBackend{Chunks: 3}, MaxConcurrentTurns: 1024}), TransportConfig{})
}

var benchSendBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Create a VPC with two vSwitches."}]}}}`)

// benchMsgSeq numbers the benchmark's messages: each send has its own
// messageId, as a real client does (a resent one starts no turn under RPC-18 when activated).
var benchMsgSeq atomic.Int64

// benchSendBodyN is benchSendBody with messageId m<n>.
func benchSendBodyN(n int64) []byte {
	return bytes.Replace(benchSendBody, []byte(`"messageId":"m1"`), []byte(`"messageId":"m`+strconv.FormatInt(n, 10)+`"`), 1)
}

func benchRequest(body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("A2A-Version", "1.0")
	return r
}

// BenchmarkSendMessage measures a blocking SendMessage through the JSON-RPC
// binding: echo backend, durable store (synchronous=FULL, group commit).
func BenchmarkSendMessage(b *testing.B) {
	h := benchHandler(b)
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	defer cpuPerOp(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			h.Serve(w, benchRequest(benchSendBodyN(benchMsgSeq.Add(1))), "bench")
			if !bytes.Contains(w.Body.Bytes(), []byte("TASK_STATE_INPUT_REQUIRED")) {
				b.Fatalf("unexpected response: %s", w.Body.String())
			}
		}
	})
}

// BenchmarkBaselineDecodeEncode is the same-run baseline for
// BenchmarkSendMessage: a bare handler that decodes a SendMessage request
// and encodes a Task, with no store and no turn.
func BenchmarkBaselineDecodeEncode(b *testing.B) {
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			var env struct {
				ID     json.RawMessage        `json:"id"`
				Params a2a.SendMessageRequest `json:"params"`
			}
			if err := json.Unmarshal(benchSendBody, &env); err != nil {
				b.Fatal(err)
			}
			t := a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}, History: []a2a.Message{*env.Params.Message}}
			if _, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": env.ID, "result": map[string]any{"task": t}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkListTasksPage measures one ListTasks page (50 tasks) with 1k and
// 10k tasks stored for the caller: the cost should not grow with the count.
func BenchmarkListTasksPage(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("tasks=%d", n), func(b *testing.B) {
			h := benchHandler(b)
			st := h.Service().hub.caps().Store
			ctx := context.Background()
			for i := 0; i < n; i++ {
				t := &a2a.Task{ID: fmt.Sprintf("task-%07d", i), ContextID: fmt.Sprintf("ctx-%d", i%100),
					Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Timestamp: a2a.Timestamp(benchEpoch.Add(msDuration(i)))}}
				if err := st.PutTask(ctx, "bench", t); err != nil {
					b.Fatal(err)
				}
			}
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":50,"historyLength":0}}`)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				w := httptest.NewRecorder()
				h.Serve(w, benchRequest(body), "bench")
				if !bytes.Contains(w.Body.Bytes(), []byte(`"nextPageToken":"`)) {
					b.Fatalf("unexpected response: %s", w.Body.String())
				}
			}
		})
	}
}

var benchEpoch = mustTime("2026-01-01T00:00:00Z")

func mustTime(s string) (t timeT) {
	t, err := a2a.ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

func msDuration(i int) durationT { return durationT(i) * 1e6 }

type (
	timeT     = time.Time
	durationT = time.Duration
)

var benchStreamBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Create a VPC with two vSwitches."}]}}}`)

// BenchmarkSendStreamingMessage measures a SendStreamingMessage through the
// JSON-RPC binding to its last SSE event: echo backend (3 chunks), durable
// store.
func BenchmarkSendStreamingMessage(b *testing.B) {
	h := benchHandler(b)
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	defer cpuPerOp(b)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w := httptest.NewRecorder()
			// Its own messageId, as a real client sends (RPC-18).
			body := bytes.Replace(benchStreamBody, []byte(`"messageId":"m1"`), []byte(`"messageId":"s`+strconv.FormatInt(benchMsgSeq.Add(1), 10)+`"`), 1)
			h.Serve(w, benchRequest(body), "bench")
			if !bytes.Contains(w.Body.Bytes(), []byte("TASK_STATE_INPUT_REQUIRED")) {
				b.Fatalf("unexpected stream: %s", w.Body.String())
			}
		}
	})
}
