package agent

import (
	"path/filepath"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Two agents on one hub and one registry (an `agent planner` and an
// `agent shell` block of a site) count their requests, turns, transitions
// and live turns under their own agent label; a service naming no agent
// counts as "default".
func TestMetricsByAgent(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.OpenSQLite(filepath.Join(t.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hub, err := NewHub(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	gate := newGate()
	planner := serveTestEnv(t, hub, NewService(hub, Config{Backend: gate, BackendName: "gate", Metrics: m, AgentName: "planner", OwnerScope: "planner"}), TransportConfig{}, func() { _ = st.Close() })
	shell := serveTestEnv(t, hub, NewService(hub, Config{Metrics: m, AgentName: "shell", OwnerScope: "shell"}), TransportConfig{}, func() {})
	root := serveTestEnv(t, hub, NewService(hub, Config{Metrics: m}), TransportConfig{}, func() {})
	val := func(name string, labels map[string]string) float64 { return metricValue(t, reg, name, labels) }
	reqs := func(agent string) float64 {
		return val("caddy_a2a_requests_total", map[string]string{"agent": agent, "binding": BindingJSONRPC, "method": a2a.MethodSendMessage, "outcome": "ok"})
	}

	// Idle: every agent has its gauge series, at 0.
	for _, a := range []string{"planner", "shell", DefaultAgentName} {
		if got, ok := gaugeOf(t, reg, "caddy_a2a_active_turns", a); !ok || got != 0 {
			t.Errorf("active_turns{agent=%s} = %v (found %v), want 0", a, got, ok)
		}
	}

	// A planner turn held open: counted as planner's live turn only.
	done := make(chan a2a.Task, 1)
	go func() { done <- planner.send("alice", sendReq(msg("plan"))) }()
	gate.waitStarted(t)
	if got, _ := gaugeOf(t, reg, "caddy_a2a_active_turns", "planner"); got != 1 {
		t.Errorf("active_turns{agent=planner} during its turn = %v, want 1", got)
	}
	if got, _ := gaugeOf(t, reg, "caddy_a2a_active_turns", "shell"); got != 0 {
		t.Errorf("active_turns{agent=shell} during planner's turn = %v, want 0", got)
	}
	shell.send("alice", sendReq(msg("one")))
	shell.send("alice", sendReq(msg("two")))
	root.send("alice", sendReq(msg("root")))
	gate.release <- struct{}{}
	<-done

	for a, want := range map[string]float64{"planner": 1, "shell": 2, DefaultAgentName: 1} {
		if got := reqs(a); got != want {
			t.Errorf("requests{agent=%s,SendMessage,ok} = %v, want %v", a, got, want)
		}
		if got := val("caddy_a2a_task_transitions_total", map[string]string{"agent": a, "state": "submitted"}); got != want {
			t.Errorf("transitions{agent=%s,submitted} = %v, want %v", a, got, want)
		}
	}
	eventually(t, "the turns observed by agent", func() bool {
		return val("caddy_a2a_turn_duration_seconds", map[string]string{"agent": "planner", "backend": "gate"}) == 1 &&
			val("caddy_a2a_turn_duration_seconds", map[string]string{"agent": "shell", "backend": "echo"}) == 2
	})
	if got := val("caddy_a2a_turn_duration_seconds", map[string]string{"agent": "shell", "backend": "gate"}); got != 0 {
		t.Errorf("turn_duration{agent=shell,backend=gate} = %v, want 0", got)
	}
	if got, _ := gaugeOf(t, reg, "caddy_a2a_active_turns", "planner"); got != 0 {
		t.Errorf("active_turns{agent=planner} after its turn = %v, want 0", got)
	}
}

// gaugeOf reads the gauge name{agent}; ok is false when no such series.
func gaugeOf(t *testing.T, reg prometheus.Gatherer, name, agent string) (v float64, ok bool) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			if labelsMatch(s.GetLabel(), map[string]string{"agent": agent}) {
				return s.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

// A stream is counted in open_streams under the agent that opened it.
func TestOpenStreamsByAgent(t *testing.T) {
	var c streamCounts
	c.add("planner", 1)
	c.add("planner", 1)
	c.add("", 1)
	c.add("planner", -1)
	got := map[string]int64{}
	c.each(func(a string, n int64) { got[a] = n })
	if got["planner"] != 1 || got[DefaultAgentName] != 1 || c.Load() != 2 {
		t.Errorf("streams by agent = %v (total %d), want planner 1, default 1 (total 2)", got, c.Load())
	}
}
