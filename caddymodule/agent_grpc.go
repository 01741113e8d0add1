package caddymodule

import (
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
)

// bindings are the protocol bindings the handler serves, in the card's
// preference order: JSONRPC, HTTP+JSON, then GRPC when enabled (XPORT-2).
func (h *AgentHandler) bindings() []string {
	b := []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}
	if h.GRPC {
		b = append(b, a2a.BindingGRPC)
	}
	return b
}

// provisionGRPC builds the gRPC binding over the handler's agent when
// the grpc option is on (XPORT-2), with the same transport settings
// (message size limit, base URL) as the HTTP bindings.
func (h *AgentHandler) provisionGRPC() {
	if !h.GRPC {
		return
	}
	h.grpc = a2agrpc.New(h.handler.Dispatcher().Handler(), h.handler.Transport(), h.logger)
}
