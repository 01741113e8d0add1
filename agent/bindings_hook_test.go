package agent_test

import (
	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc03"
)

// The tests of package agent drive the service over its real HTTP
// bindings, which live in agent/binding (an importer of this package):
// this external test file hands them binding.NewHandler over the
// service's interceptor chain (agent.NewHandler), as caddymodule builds it.
func init() {
	agent.NewHTTPHandler = func(svc *agent.Service, tc agent.TransportConfig) agent.HTTPHandler {
		d := jsonrpc.NewDispatcher(agent.NewHandler(svc))
		if tc.LegacyV03 {
			d = d.WithCompat(jsonrpc03.New(tc.Metrics, ""))
		}
		return httpHandler{binding.NewHandler(d, httpx.TransportConfig{KeepAlive: tc.KeepAlive, MaxBodyBytes: tc.MaxBodyBytes}), svc}
	}
}

// httpHandler is binding.Handler with the service behind it.
type httpHandler struct {
	*binding.Handler
	svc *agent.Service
}

// Service returns the service behind the handler.
func (h httpHandler) Service() *agent.Service { return h.svc }
