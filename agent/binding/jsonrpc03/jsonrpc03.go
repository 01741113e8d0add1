// Package jsonrpc03 serves A2A 0.3 JSON-RPC clients over the same
// agent.Handler as A2A 1.0 ones (RPC-2, the legacy_v03 option): a call
// made with a 0.3 method name (message/send, tasks/get, …) is translated
// to its 1.0 call, run on the handler, and its answer and events are
// rendered back in 0.3 form; the push configs such a caller creates get
// 0.3 payloads. The service never hears of 0.3. It plugs into every
// JSON-RPC carrier through jsonrpc.Dispatcher.WithCompat.
package jsonrpc03

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// Compat is the A2A 0.3 jsonrpc.Compat.
type Compat struct {
	metrics *agent.Metrics
	agent   string
}

var _ jsonrpc.Compat = Compat{}

// New returns the 0.3 compat of the agent named agentName (its
// agent.Config.AgentName); every translated call is counted in
// caddy_a2a_legacy_v03_requests_total{agent=agentName} of m (nil: not
// counted).
func New(m *agent.Metrics, agentName string) Compat {
	return Compat{metrics: m, agent: agentName}
}

// Translate implements jsonrpc.Compat: a 0.3 method name becomes its 1.0
// method, the params are translated 0.3→1.0, and the call is served as
// 1.0 (a 0.3 client sends no A2A-Version header).
func (c Compat) Translate(ac agent.Call, call rpc.Call) (agent.Call, rpc.Call, bool, error) {
	m10, ok := v03.Method10(call.Method)
	if !ok {
		return ac, call, false, nil
	}
	c.metrics.V03Request(c.agent, m10)
	params, err := v03.ParamsTo10(call.Method, call.Params)
	call.Method = m10
	ac.Version = a2a.ProtocolVersion
	if err == nil {
		call.Params = params
	}
	return ac, call, true, err
}

// Handler implements jsonrpc.Compat: h, with every push config a 0.3
// caller creates (inline with a message, or on its own) marked Legacy, so
// its deliveries carry 0.3 payloads.
func (Compat) Handler(h agent.Handler) agent.Handler { return legacyPush{h} }

// Result implements jsonrpc.Compat: the 0.3 form of a 1.0 result.
func (Compat) Result(method string, res any) any { return v03.Result03(method, res) }

// Stream implements jsonrpc.Compat: each event carries its 0.3 rendering.
func (Compat) Stream(st agent.Stream) agent.Stream { return legacyStream{st} }

// legacyPush marks the push configs of 0.3 callers.
type legacyPush struct{ agent.Handler }

// SendMessage marks the message's inline push config.
func (l legacyPush) SendMessage(ctx context.Context, call agent.Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	markInline(req)
	return l.Handler.SendMessage(ctx, call, req)
}

// SendStreamingMessage marks the message's inline push config.
func (l legacyPush) SendStreamingMessage(ctx context.Context, call agent.Call, req *a2a.SendMessageRequest) (agent.Stream, error) {
	markInline(req)
	return l.Handler.SendStreamingMessage(ctx, call, req)
}

// CreateTaskPushNotificationConfig marks the config.
func (l legacyPush) CreateTaskPushNotificationConfig(ctx context.Context, call agent.Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	if req != nil {
		req.Legacy = true
	}
	return l.Handler.CreateTaskPushNotificationConfig(ctx, call, req)
}

// markInline marks the inline push config of a send.
func markInline(req *a2a.SendMessageRequest) {
	if req != nil && req.Configuration != nil && req.Configuration.TaskPushNotificationConfig != nil {
		req.Configuration.TaskPushNotificationConfig.Legacy = true
	}
}

// legacyStream renders each event of a 1.0 stream for a 0.3 caller: the
// 0.3 event rides in StreamResponse.Legacy, which jsonrpc.EventFrame
// sends.
type legacyStream struct{ agent.Stream }

// Next returns the next event with its 0.3 rendering attached.
func (s legacyStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	ev, ok := s.Stream.Next(ctx)
	if ok {
		ev.Legacy = v03.Event03(ev)
	}
	return ev, ok
}
