package redisrpc

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// TestRedisRPCMetricsAndBatch: XPORT-5, OPS-2 — requests over Redis are
// counted under binding "redis" with their method and outcome (refusals
// too), and a batch is answered by one final entry holding the array.
func TestRedisRPCMetricsAndBatch(t *testing.T) {
	rdb := startRedis(t)
	reg := prometheus.NewRegistry()
	m, err := agent.NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := agent.NewHub(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close(); _ = st.Close() })
	svc := agent.NewService(hub, agent.Config{Metrics: m})
	startConsumer(t, rdb, svc, Options{}, nil)

	send(t, rdb, "g", replyStream, rpcPayload(1, a2a.MethodGetTask, map[string]any{"id": "none"}), nil)
	readUntilFinal(t, rdb, replyStream, 10*time.Second)
	send(t, rdb, "foreign", "elsewhere", rpcPayload(2, a2a.MethodGetTask, map[string]any{"id": "none"}), nil)
	batch := "[" + rpcPayload(3, a2a.MethodListTasks, map[string]any{}) + "," + rpcPayload(4, a2a.MethodGetTask, map[string]any{"id": "x"}) + "]"
	const batchStream = DefaultResponsePrefix + ":batch"
	send(t, rdb, "b", batchStream, batch, nil)
	got := readUntilFinal(t, rdb, batchStream, 10*time.Second)
	var arr []rpcResp
	if err := jsonUnmarshal(got[0].Payload, &arr); err != nil || len(got) != 1 || len(arr) != 2 {
		t.Fatalf("batch answer %+v (%v)", got, err)
	}
	assertDrained(t, rdb)

	want := map[[3]string]float64{
		{"redis", a2a.MethodGetTask, "TASK_NOT_FOUND"}: 2,
		{"redis", a2a.MethodListTasks, "ok"}:           1,
		{"redis", "unknown", "INVALID_REQUEST"}:        1,
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[3]string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "caddy_a2a_requests_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			var k [3]string
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "binding":
					k[0] = l.GetValue()
				case "method":
					k[1] = l.GetValue()
				case "outcome":
					k[2] = l.GetValue()
				}
			}
			seen[k] = mt.GetCounter().GetValue()
		}
	}
	for k, v := range want {
		if seen[k] != v {
			t.Errorf("requests_total%v = %v, want %v (all: %v)", k, seen[k], v, seen)
		}
	}
}
