package agent

import (
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// metricValue returns the value of the series name{labels} in reg: a
// counter's or gauge's value, a histogram's sample count; 0 when absent.
func metricValue(t *testing.T, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !labelsMatch(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return 0
}

func labelsMatch(got []*dto.LabelPair, want map[string]string) bool {
	n := 0
	for _, lp := range got {
		v, ok := want[lp.GetName()]
		if !ok {
			continue
		}
		if v != lp.GetValue() {
			return false
		}
		n++
	}
	return n == len(want)
}

// eventually polls cond for up to 5s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestNewMetricsSharesOneRegistration(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m1, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics: %v", err)
	}
	m2, err := NewMetrics(reg)
	if err != nil {
		t.Fatalf("NewMetrics again: %v", err)
	}
	if m1 != m2 {
		t.Errorf("second NewMetrics on one registry returned a new value; want the registered one")
	}
	if _, err := reg.Gather(); err != nil {
		t.Errorf("gather: %v", err)
	}
	unregistered, err := NewMetrics(nil)
	if err != nil || unregistered == nil {
		t.Errorf("NewMetrics(nil) = %v, %v; want metrics, nil", unregistered, err)
	}
}

func TestMetricsNilSafe(t *testing.T) {
	var m *Metrics
	m.request("", BindingJSONRPC, a2a.MethodGetTask, nil)
	m.requestCode("", BindingREST, "", a2a.CodeParseError)
	m.turnEnded("", "echo", a2a.TaskStateCompleted, time.Second)
	m.transition("", a2a.TaskStateWorking)
	m.V03Request("", a2a.MethodGetTask)
	m.storeOp(opGetTask, time.Now())
	m.watch(nil, "")
}

func TestMetricLabelsAreBounded(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{a2a.MethodSendMessage, a2a.MethodSendMessage},
		{"message/send", methodUnknown},
		{"", methodUnknown},
		{"task-1234", methodUnknown},
	} {
		if got := methodLabel(tc.in); got != tc.want {
			t.Errorf("methodLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   a2a.TaskState
		want string
	}{
		{a2a.TaskStateInputRequired, "input_required"},
		{a2a.TaskStateCompleted, "completed"},
		{a2a.TaskState("TASK_STATE_BOGUS"), "unknown"},
	} {
		if got := stateLabel(tc.in); got != tc.want {
			t.Errorf("stateLabel(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestMetricsWorkload(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	gate := newGate()
	e := newTestEnv(t, Config{Backend: gate, BackendName: "gate", Metrics: m})
	val := func(name string, labels map[string]string) float64 { return metricValue(t, reg, name, labels) }
	req := func(binding, method, outcome string) float64 {
		return val("caddy_a2a_requests_total", map[string]string{"binding": binding, "method": method, "outcome": outcome})
	}

	// A blocking send: one request ok, one turn, submitted → working → input_required.
	done := make(chan a2a.Task, 1)
	go func() { done <- e.send("alice", sendReq(msg("hello"))) }()
	gate.waitStarted(t)
	if got := val("caddy_a2a_active_turns", nil); got != 1 {
		t.Errorf("active turns during a turn = %v, want 1", got)
	}
	gate.release <- struct{}{}
	task := <-done
	if got := req(BindingJSONRPC, a2a.MethodSendMessage, "ok"); got != 1 {
		t.Errorf("requests{SendMessage,ok} = %v, want 1", got)
	}
	eventually(t, "turn duration observed", func() bool {
		return val("caddy_a2a_turn_duration_seconds", map[string]string{"backend": "gate", "outcome": "input_required"}) == 1
	})
	for state, want := range map[string]float64{"submitted": 1, "working": 1, "input_required": 1} {
		if got := val("caddy_a2a_task_transitions_total", map[string]string{"state": state}); got != want {
			t.Errorf("transitions{%s} = %v, want %v", state, got, want)
		}
	}
	if got := val("caddy_a2a_active_turns", nil); got != 0 {
		t.Errorf("active turns after the turn = %v, want 0", got)
	}

	// Errors: by reason, unknown methods and unreadable bodies as method="unknown".
	e.rpcError("alice", a2a.MethodGetTask, map[string]any{"id": "nope"}, a2a.CodeTaskNotFound)
	e.rpcError("alice", "tasks/get", map[string]any{"id": task.ID}, a2a.CodeMethodNotFound)
	e.rawRPC(`{"jsonrpc":`, v1Headers("alice"))
	e.getTask("alice", task.ID)
	if hr := e.do(http.MethodGet, "/tasks/nope", nil, v1Headers("alice")); hr.status != http.StatusNotFound {
		t.Errorf("REST GET /tasks/nope: HTTP %d", hr.status)
	}
	e.do(http.MethodGet, "/tasks", nil, v1Headers("alice"))
	for _, tc := range []struct {
		binding, method, outcome string
		want                     float64
	}{
		{BindingJSONRPC, a2a.MethodGetTask, "TASK_NOT_FOUND", 1},
		{BindingJSONRPC, a2a.MethodGetTask, "ok", 1},
		{BindingJSONRPC, methodUnknown, "METHOD_NOT_FOUND", 1},
		{BindingJSONRPC, methodUnknown, "PARSE_ERROR", 1},
		{BindingREST, a2a.MethodGetTask, "TASK_NOT_FOUND", 1},
		{BindingREST, a2a.MethodListTasks, "ok", 1},
	} {
		if got := req(tc.binding, tc.method, tc.outcome); got != tc.want {
			t.Errorf("requests{%s,%s,%s} = %v, want %v", tc.binding, tc.method, tc.outcome, got, tc.want)
		}
	}

	// A stream: counted as open while it is, and its request as ok.
	// A client-chosen context id is looked up in the store (get_context).
	st := e.rpcStream("alice", a2a.MethodSendStreamingMessage, sendReq(inContext(msg("stream"), "ctx-metrics")), 7)
	id := gate.waitStarted(t)
	eventually(t, "an open stream", func() bool { return val("caddy_a2a_open_streams", nil) == 1 })
	if got := req(BindingJSONRPC, a2a.MethodSendStreamingMessage, "ok"); got != 1 {
		t.Errorf("requests{SendStreamingMessage,ok} = %v, want 1", got)
	}

	// Cancel it: the canceled transition, then the stream ends.
	var canceled a2a.Task
	e.result("alice", a2a.MethodCancelTask, map[string]any{"id": id}, &canceled)
	st.rpcAll("7")
	eventually(t, "the stream closed", func() bool { return val("caddy_a2a_open_streams", nil) == 0 })
	if got := val("caddy_a2a_task_transitions_total", map[string]string{"state": "canceled"}); got != 1 {
		t.Errorf("transitions{canceled} = %v, want 1", got)
	}
	if got := req(BindingJSONRPC, a2a.MethodCancelTask, "ok"); got != 1 {
		t.Errorf("requests{CancelTask,ok} = %v, want 1", got)
	}
	eventually(t, "the canceled turn observed", func() bool {
		return val("caddy_a2a_turn_duration_seconds", map[string]string{"backend": "gate", "outcome": "canceled"}) == 1
	})

	// Store latency: every operation the workload made is observed.
	for _, op := range []string{opPutTask, opGetTask, opListTasks, opGetContext} {
		if got := val("caddy_a2a_store_operation_duration_seconds", map[string]string{"op": op}); got == 0 {
			t.Errorf("store op %s: no observation", op)
		}
	}

	// No label carries a task id or a principal.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mm := range mf.GetMetric() {
			for _, lp := range mm.GetLabel() {
				if v := lp.GetValue(); v == task.ID || v == id || strings.Contains(v, "alice") {
					t.Errorf("%s has label %s=%q", mf.GetName(), lp.GetName(), v)
				}
			}
		}
	}
}

func TestTurnLogLine(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	e := newTestEnv(t, Config{Logger: zap.New(core)})
	task := e.send("bob", sendReq(msg("a secret prompt")))
	var entry observer.LoggedEntry
	eventually(t, "the turn line", func() bool {
		for _, l := range logs.FilterMessage("turn").All() {
			entry = l
			return true
		}
		return false
	})
	if entry.Level != zapcore.DebugLevel {
		t.Errorf("a quick INPUT_REQUIRED turn logged its line at %v, want debug", entry.Level)
	}
	fields := entry.ContextMap()
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for k, want := range map[string]any{
		"task_id": task.ID, "context_id": task.ContextID, "principal": "bob", "backend": "echo",
		"outcome": string(a2a.TaskStateInputRequired),
	} {
		if fields[k] != want {
			t.Errorf("turn line %s = %v, want %v (fields %v)", k, fields[k], want, keys)
		}
	}
	for _, k := range []string{"duration", "correlation_id"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("turn line has no %s (fields %v)", k, keys)
		}
	}
	for _, l := range logs.All() {
		for k, v := range l.ContextMap() {
			if s, ok := v.(string); ok && strings.Contains(s, "secret prompt") {
				t.Errorf("log line %q field %s holds the prompt", l.Message, k)
			}
		}
	}
}

// TestTurnLogLevel: a quick routine turn logs at debug; a slow one and
// every turn that ends otherwise at info.
func TestTurnLogLevel(t *testing.T) {
	for _, tc := range []struct {
		state   a2a.TaskState
		elapsed time.Duration
		want    zapcore.Level
	}{
		{a2a.TaskStateCompleted, time.Millisecond, zapcore.DebugLevel},
		{a2a.TaskStateInputRequired, quickTurn - time.Millisecond, zapcore.DebugLevel},
		{a2a.TaskStateCompleted, quickTurn, zapcore.InfoLevel},
		{a2a.TaskStateInputRequired, time.Minute, zapcore.InfoLevel},
		{a2a.TaskStateFailed, time.Millisecond, zapcore.InfoLevel},
		{a2a.TaskStateCanceled, time.Millisecond, zapcore.InfoLevel},
		{a2a.TaskStateRejected, time.Millisecond, zapcore.InfoLevel},
		{a2a.TaskStateAuthRequired, time.Millisecond, zapcore.InfoLevel},
	} {
		if got := turnLogLevel(tc.state, tc.elapsed); got != tc.want {
			t.Errorf("turnLogLevel(%s, %v) = %v, want %v", tc.state, tc.elapsed, got, tc.want)
		}
	}
}
