package redisrpc

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/internal/promtest"
)

// XPORT-5: a consumer stopped mid-stream detaches the stream (the turn
// goes on, even with cancel_on_disconnect: the request stays pending and
// is served again), the open-stream gauge is back at 0 and no final entry
// is written.
func TestRedisRPCStopDetachesStream(t *testing.T) {
	rdb := startRedis(t)
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		t.Fatal(err)
	}
	m, err := agent.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	svc := agent.NewService(hub, agent.Config{Backend: backend.EchoBackend{Chunks: 30, Delay: 100 * time.Millisecond}, Metrics: m, CancelOnDisconnect: true})
	t.Cleanup(func() { hub.SetDrainTimeout(0); _ = hub.Close(); _ = st.Close() })
	a := New(rdb, jsonrpcDispatcher(svc), Options{ClaimAfter: time.Minute, Consumer: "a"}, nil, nil)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	send(t, rdb, "cut", replyStream, rpcPayload(1, a2a.MethodSendStreamingMessage, sendParams("a b c d e f g h")), nil)
	waitFor(t, func() bool { return rdb.XLen(t.Context(), replyStream).Val() >= 1 })
	first := rdb.XRange(t.Context(), replyStream, "-", "+").Val()[0]
	var r struct {
		Result a2a.StreamResponse `json:"result"`
	}
	if err := json.Unmarshal([]byte(first.Values[FieldPayload].(string)), &r); err != nil || r.Result.Task == nil {
		t.Fatalf("first entry %v: %v", first.Values, err)
	}
	if n := promtest.Gauge(t, m, "caddy_a2a_open_streams"); n != 1 {
		t.Fatalf("%v open streams while streaming, want 1", n)
	}
	a.Stop(50 * time.Millisecond)
	if s := a.Stats(); s.Abandoned != 1 {
		t.Fatalf("stats %+v, want the request abandoned", s)
	}
	if n := promtest.Gauge(t, m, "caddy_a2a_open_streams"); n != 0 {
		t.Fatalf("%v open streams after the stop, want 0", n)
	}
	for _, e := range rdb.XRange(t.Context(), replyStream, "-", "+").Val() {
		if e.Values[FieldFinal] == "true" {
			t.Fatalf("a final entry after the stop: %v", e.Values)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := svc.GetTask(context.Background(), agent.Call{Version: "1.0"}, &a2a.GetTaskRequest{ID: r.Result.Task.ID})
		if err == nil && task.Status.State == a2a.TaskStateInputRequired {
			break // the echo turn's end: not canceled
		}
		if time.Now().After(deadline) {
			t.Fatalf("task: %v %v, want the turn run to its end (the stream was detached)", task, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
