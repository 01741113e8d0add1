package agent_test

import (
	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// The tests of package agent drive the service over its real HTTP
// bindings, which live in agent/binding (an importer of this package):
// this external test file hands them binding.NewHandler.
func init() {
	agent.NewHandler = func(svc *agent.Service, tc agent.TransportConfig) agent.Handler {
		return binding.NewHandler(svc, httpx.TransportConfig{KeepAlive: tc.KeepAlive, MaxBodyBytes: tc.MaxBodyBytes})
	}
}
