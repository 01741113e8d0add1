// Package agenttest holds test fixtures for the bindings: an agent.Service
// over a real SQLite store, its open-stream gauge and request counter, and
// a wait for a task's state. Only tests import it.
package agenttest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Service returns a service with cfg over a real SQLite store in t's
// temporary directory, and its metrics (cfg.Metrics, or new ones when it
// is nil). At cleanup the hub closes without a drain (running turns are
// canceled), then the store.
func Service(t testing.TB, cfg agent.Config) (*agent.Service, *agent.Metrics) {
	t.Helper()
	hub := Hub(t)
	if cfg.Metrics == nil {
		var err error
		if cfg.Metrics, err = agent.NewMetrics(prometheus.NewRegistry()); err != nil {
			t.Fatal(err)
		}
	}
	return agent.NewService(hub, cfg), cfg.Metrics
}

// Hub returns a hub over a real SQLite store in t's temporary directory.
// At cleanup (after the cleanups registered later, such as the servers of
// a binding) it closes without a drain (running turns are canceled), then
// the store.
func Hub(t testing.TB) *agent.Hub {
	t.Helper()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := agent.NewHub(context.Background(), st)
	if err != nil {
		_ = st.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hub.SetDrainTimeout(0)
		_ = hub.Close()
		_ = st.Close()
	})
	return hub
}

// OpenStreams reads the caddy_a2a_open_streams gauge of m, as a scrape
// sees it: the sum over its agent series.
func OpenStreams(t testing.TB, m *agent.Metrics) float64 {
	t.Helper()
	series := gather(t, m, "caddy_a2a_open_streams")
	if len(series) == 0 {
		t.Fatal("no caddy_a2a_open_streams gauge")
	}
	var n float64
	for _, mt := range series {
		n += mt.GetGauge().GetValue()
	}
	return n
}

// Requests reads caddy_a2a_requests_total{binding,method,outcome} of m,
// summed over its agents (0 when that series was never counted).
func Requests(t testing.TB, m *agent.Metrics, binding, method, outcome string) float64 {
	t.Helper()
	want := map[string]string{"binding": binding, "method": method, "outcome": outcome}
	var n float64
	for _, mt := range gather(t, m, "caddy_a2a_requests_total") {
		match := true
		for _, lp := range mt.GetLabel() {
			if w, ok := want[lp.GetName()]; ok {
				match = match && w == lp.GetValue()
			}
		}
		if match {
			n += mt.GetCounter().GetValue()
		}
	}
	return n
}

// gather returns the series of the metric name of m, as a scrape sees them.
func gather(t testing.TB, m *agent.Metrics, name string) []*dto.Metric {
	t.Helper()
	reg := prometheus.NewRegistry()
	if err := reg.Register(m); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()
		}
	}
	return nil
}

// WaitState waits up to 10s for task id of svc to be in state want; the
// test fails with the last state seen otherwise.
func WaitState(t testing.TB, svc *agent.Service, id string, want a2a.TaskState) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		task, err := svc.GetTask(context.Background(), agent.Call{Version: "1.0"}, &a2a.GetTaskRequest{ID: id})
		if err == nil && task.Status.State == want {
			return
		}
		if time.Now().After(deadline) {
			var got a2a.TaskState
			if task != nil {
				got = task.Status.State
			}
			t.Fatalf("task %s: state %q (%v), want %s", id, got, err, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
