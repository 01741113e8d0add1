package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// provisionGRPCJSONRPC builds the gRPC JSON-RPC envelope binding
// (XPORT-6) over the handler's dispatcher when grpc_jsonrpc is on, with
// the transport settings of the HTTP bindings (max_body_size bounds an
// envelope) and the site's other agents as tenants (TURN-10).
func (h *AgentHandler) provisionGRPCJSONRPC(app *App, tc httpx.TransportConfig) {
	if !h.GRPCJSONRPC {
		return
	}
	h.grpcJSONRPC = grpcjsonrpc.New(h.handler.Dispatcher(), tc, grpcjsonrpc.Config{
		Tenants: app.tenantsOf(h),
		Logger:  h.logger,
	})
}

// serveGRPCJSONRPC serves r with the envelope binding when it is on and r
// is a gRPC request for it, or any gRPC request when the official gRPC
// service is off (another service then gets UNIMPLEMENTED); false when r
// is not its.
func (h *AgentHandler) serveGRPCJSONRPC(w http.ResponseWriter, r *http.Request, principal string) bool {
	if h.grpcJSONRPC == nil {
		return false
	}
	if !grpcjsonrpc.Handles(r) && (h.grpc != nil || !isGRPCRequest(r)) {
		return false
	}
	h.grpcJSONRPC.ServeHTTP(w, r, principal) // XPORT-6
	return true
}

// unmarshalGRPCJSONRPC parses the grpc_jsonrpc option (XPORT-6), which
// takes no arguments:
//
//	grpc_jsonrpc
func (h *AgentHandler) unmarshalGRPCJSONRPC(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	if d.NextBlock(d.Nesting()) {
		return d.Errf("grpc_jsonrpc: takes no block")
	}
	h.GRPCJSONRPC = true
	return nil
}
