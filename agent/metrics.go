package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Request bindings (the binding label of caddy_a2a_requests_total).
const (
	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
	BindingRedis   = "redis" // Redis Streams JSON-RPC (XPORT-5)
	// BindingWebSocket is the WebSocket JSON-RPC binding (XPORT-3).
	BindingWebSocket = "websocket"
	BindingGRPC      = "grpc"
	// BindingGRPCJSONRPC is the gRPC JSON-RPC envelope carrier (XPORT-6).
	BindingGRPCJSONRPC = "grpc-jsonrpc"
)

// Store operations (the op label of caddy_a2a_store_operation_duration_seconds).
const (
	opPutTask    = "put_task"
	opGetTask    = "get_task"
	opListTasks  = "list_tasks"
	opPutContext = "put_context"
	opGetContext = "get_context"
)

// DefaultAgentName is the agent label of a site root's agent, and of a
// service whose Config names no agent (Config.AgentName).
const DefaultAgentName = "default"

// methodUnknown labels requests whose method is not an A2A 1.0 method (or
// could not be read).
const methodUnknown = "unknown"

// BindingStdio is the binding label of requests read on the stdio carrier
// (XPORT-4, `caddy a2a stdio`).
const BindingStdio = "stdio"

// knownMethods bounds the method label.
var knownMethods = map[string]bool{
	a2a.MethodSendMessage: true, a2a.MethodSendStreamingMessage: true, a2a.MethodGetTask: true,
	a2a.MethodListTasks: true, a2a.MethodCancelTask: true, a2a.MethodSubscribeToTask: true,
	a2a.MethodCreatePushConfig: true, a2a.MethodGetPushConfig: true, a2a.MethodListPushConfigs: true,
	a2a.MethodDeletePushConfig: true, a2a.MethodGetExtendedAgentCard: true,
}

// Metrics are the Prometheus metrics of the A2A endpoints (OPS-2). Every
// label has a bounded set of values: no task ids, principals or URLs. The
// agent label is Config.AgentName, a name from the configuration.
//
// One Metrics serves every endpoint of a registry: NewMetrics returns the
// one already registered. All methods are safe on a nil *Metrics (they do
// nothing), so services without metrics need no checks.
//
// Metrics is itself the prometheus.Collector that is registered.
type Metrics struct {
	requests     *prometheus.CounterVec
	turnDuration *prometheus.HistogramVec
	transitions  *prometheus.CounterVec
	storeOps     *prometheus.HistogramVec
	pruneds      *prometheus.CounterVec
	legacy       *prometheus.CounterVec

	activeTurns *prometheus.Desc
	openStreams *prometheus.Desc

	mu   sync.Mutex
	hubs map[*Hub]map[string]bool // the hubs whose live turns and streams are counted → their agents
}

// NewMetrics returns the metrics registered with reg, registering them
// first when reg has none yet (several a2a handlers of one Caddy config
// share one registry). A nil reg gives unregistered metrics.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caddy_a2a_requests_total",
			Help: "A2A requests by agent, binding (jsonrpc, rest, …), method (unknown when not an A2A method) and outcome (ok or the error reason, e.g. TASK_NOT_FOUND).",
		}, []string{"agent", "binding", "method", "outcome"}),
		turnDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "caddy_a2a_turn_duration_seconds",
			Help:    "Duration of agent turns by agent, backend module and outcome (the final task state).",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 9), // 10ms … ~11min
		}, []string{"agent", "backend", "outcome"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caddy_a2a_task_transitions_total",
			Help: "Task state transitions by agent and the state entered.",
		}, []string{"agent", "state"}),
		storeOps: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "caddy_a2a_store_operation_duration_seconds",
			Help:    "Latency of task store operations by op (put_task, get_task, list_tasks, put_context, get_context).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 8), // 100µs … ~1.6s
		}, []string{"op"}),
		pruneds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caddy_a2a_pruned_total",
			Help: "Records removed by retention (OPS-5) by kind (tasks, contexts, dead_letters, artifacts, shared_artifacts).",
		}, []string{"kind"}),
		legacy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "caddy_a2a_legacy_v03_requests_total",
			Help: "Requests made with an A2A 0.3 method name (legacy_v03), by agent and the A2A 1.0 method they were served as; they are counted in caddy_a2a_requests_total under that method too.",
		}, []string{"agent", "method"}),
		activeTurns: prometheus.NewDesc("caddy_a2a_active_turns", "Turns running now (submitted or working) by agent.", []string{"agent"}, nil),
		openStreams: prometheus.NewDesc("caddy_a2a_open_streams", "Open event streams (SendStreamingMessage and SubscribeToTask subscribers) by agent.", []string{"agent"}, nil),
		hubs:        map[*Hub]map[string]bool{},
	}
	if reg == nil {
		return m, nil
	}
	if err := reg.Register(m); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("registering a2a metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(*Metrics)
		if !ok {
			return nil, fmt.Errorf("registering a2a metrics: another collector holds the caddy_a2a_ names (%T)", are.ExistingCollector)
		}
		return existing, nil
	}
	return m, nil
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.requests.Describe(ch)
	m.turnDuration.Describe(ch)
	m.transitions.Describe(ch)
	m.storeOps.Describe(ch)
	m.pruneds.Describe(ch)
	m.legacy.Describe(ch)
	ch <- m.activeTurns
	ch <- m.openStreams
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.requests.Collect(ch)
	m.turnDuration.Collect(ch)
	m.transitions.Collect(ch)
	m.storeOps.Collect(ch)
	m.pruneds.Collect(ch)
	m.legacy.Collect(ch)
	m.collectGauges(ch)
}

// request counts one answered request; err nil is the outcome ok.
func (m *Metrics) request(agent, binding, method string, err error) {
	if m == nil {
		return
	}
	outcome := "ok"
	if err != nil {
		outcome = a2a.AsError(err).Reason()
	}
	m.requests.WithLabelValues(agentLabel(agent), binding, methodLabel(method), outcome).Inc()
}

// V03Request counts one request to agent (its Config.AgentName; ""
// is DefaultAgentName) made with an A2A 0.3 method name (the 0.3 compat
// binding, RPC-2) under the 1.0 method it was served as.
func (m *Metrics) V03Request(agent, method string) {
	if m == nil {
		return
	}
	m.legacy.WithLabelValues(agentLabel(agent), methodLabel(method)).Inc()
}

// requestCode counts one request answered with the JSON-RPC error code.
func (m *Metrics) requestCode(agent, binding, method string, code int) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(agentLabel(agent), binding, methodLabel(method), (&a2a.Error{Code: code}).Reason()).Inc()
}

// turnEnded observes a finished turn of agent.
func (m *Metrics) turnEnded(agent, backend string, state a2a.TaskState, d time.Duration) {
	if m == nil {
		return
	}
	m.turnDuration.WithLabelValues(agentLabel(agent), backend, stateLabel(state)).Observe(d.Seconds())
}

// transition counts a task of agent entering state.
func (m *Metrics) transition(agent string, state a2a.TaskState) {
	if m == nil {
		return
	}
	m.transitions.WithLabelValues(agentLabel(agent), stateLabel(state)).Inc()
}

// pruned counts n records of kind removed by retention (OPS-5).
func (m *Metrics) pruned(kind string, n int) {
	if m == nil || n <= 0 {
		return
	}
	m.pruneds.WithLabelValues(kind).Add(float64(n))
}

// storeOp observes a store operation that began at start.
func (m *Metrics) storeOp(op string, start time.Time) {
	if m == nil {
		return
	}
	m.storeOps.WithLabelValues(op).Observe(time.Since(start).Seconds())
}

// agentLabel is the agent label of a service's Config.AgentName: the
// name itself, DefaultAgentName when empty.
func agentLabel(agent string) string {
	if agent == "" {
		return DefaultAgentName
	}
	return agent
}

func methodLabel(method string) string {
	if knownMethods[method] {
		return method
	}
	return methodUnknown
}

// stateLabel is the short lowercase name of a state: TASK_STATE_INPUT_REQUIRED
// becomes input_required.
func stateLabel(s a2a.TaskState) string {
	if !s.Valid() {
		return "unknown"
	}
	return strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_"))
}

// storeHandle is a service's one handle on its hub's store: the store's
// Capabilities, resolved once when it opened (caps), with the task and
// context operations of its Store timed into the service's metrics.
type storeHandle struct {
	hub *Hub
	m   *Metrics // nil: not timed
}

// caps returns what the store can do: the optional parts are nil when
// the store does not have them.
func (t storeHandle) caps() *store.Capabilities { return t.hub.caps() }

// PutTask is the store's PutTask, timed.
func (t storeHandle) PutTask(ctx context.Context, owner string, task *a2a.Task) error {
	defer t.m.storeOp(opPutTask, time.Now())
	return t.caps().Store.PutTask(ctx, owner, task)
}

// GetTask is the store's GetTask, timed.
func (t storeHandle) GetTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	defer t.m.storeOp(opGetTask, time.Now())
	return t.caps().Store.GetTask(ctx, owner, id)
}

// ListTasks is the store's ListTasks, timed.
func (t storeHandle) ListTasks(ctx context.Context, q store.ListQuery) (store.ListResult, error) {
	defer t.m.storeOp(opListTasks, time.Now())
	return t.caps().Store.ListTasks(ctx, q)
}

// PutContext is the store's PutContext, timed.
func (t storeHandle) PutContext(ctx context.Context, c store.ContextRecord) error {
	defer t.m.storeOp(opPutContext, time.Now())
	return t.caps().Store.PutContext(ctx, c)
}

// GetContext is the store's GetContext, timed.
func (t storeHandle) GetContext(ctx context.Context, owner, id string) (*store.ContextRecord, error) {
	defer t.m.storeOp(opGetContext, time.Now())
	return t.caps().Store.GetContext(ctx, owner, id)
}
