package caddymodule

import (
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/push"
)

func TestBackendName(t *testing.T) {
	for _, tc := range []struct {
		mod  any
		want string
	}{
		{new(EchoBackend), "echo"},
		{struct{}{}, "custom"},
	} {
		if got := backendName(tc.mod); got != tc.want {
			t.Errorf("backendName(%T) = %q, want %q", tc.mod, got, tc.want)
		}
	}
}

func TestAgentMetricsSharedPerConfig(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	m1, err := agentMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := agentMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m1 != m2 {
		t.Error("two handlers of one config got different metrics")
	}
}

func TestPushMetricsCollector(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	defer cancel()
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	kr, err := push.NewKeyRing()
	if err != nil {
		t.Fatal(err)
	}
	eng := push.NewEngine(push.NewLocalQueue(st, 0), kr, 1, push.Settings{}, nil)
	// Two handlers with the same engine, registered twice: one series set.
	for range 2 {
		if err := registerPushMetrics(ctx, pushQueueLocal, eng); err != nil {
			t.Fatalf("registerPushMetrics: %v", err)
		}
	}
	eng.Enqueued(3)
	mfs, err := ctx.GetMetricsRegistry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, mf := range mfs {
		seen[mf.GetName()] = len(mf.GetMetric())
		if mf.GetName() == "caddy_a2a_push_queued_total" {
			if v := mf.GetMetric()[0].GetCounter().GetValue(); v != 3 {
				t.Errorf("caddy_a2a_push_queued_total = %v, want 3", v)
			}
			if l := mf.GetMetric()[0].GetLabel()[0]; l.GetName() != "queue" || l.GetValue() != pushQueueLocal {
				t.Errorf("label %s=%s, want queue=%s", l.GetName(), l.GetValue(), pushQueueLocal)
			}
		}
	}
	for _, name := range []string{"caddy_a2a_push_queued_total", "caddy_a2a_push_delivered_total", "caddy_a2a_push_retried_total",
		"caddy_a2a_push_dead_total", "caddy_a2a_push_attempts_total", "caddy_a2a_push_queue_depth"} {
		if seen[name] != 1 {
			t.Errorf("%s: %d series, want 1", name, seen[name])
		}
	}
}
