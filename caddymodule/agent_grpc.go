package caddymodule

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
)

// bindings are the protocol bindings the handler serves, in the card's
// preference order: JSONRPC, HTTP+JSON, then GRPC (XPORT-2) and
// grpc-jsonrpc (XPORT-6) when enabled.
func (h *AgentHandler) bindings() []string {
	b := []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}
	if h.GRPC {
		b = append(b, a2a.BindingGRPC)
	}
	if h.GRPCJSONRPC {
		b = append(b, a2a.BindingGRPCJSONRPC)
	}
	return b
}

// isGRPCRequest reports whether r is a gRPC request (HTTP/2,
// application/grpc).
func isGRPCRequest(r *http.Request) bool { return a2agrpc.IsGRPC(r) }

// provisionGRPC builds the gRPC binding over the handler's agent when
// the grpc option is on (XPORT-2), with the same transport settings
// (message size limit, base URL) as the HTTP bindings.
func (h *AgentHandler) provisionGRPC() {
	if !h.GRPC {
		return
	}
	var opts []a2agrpc.Option
	if h.GRPCReflection {
		opts = append(opts, a2agrpc.WithReflection())
	}
	h.grpc = a2agrpc.New(h.handler.Dispatcher().Handler(), h.handler.Transport(), h.logger, opts...)
}

// validateGRPC checks that grpc_reflection comes with grpc.
func (h *AgentHandler) validateGRPC() error {
	if h.GRPCReflection && !h.GRPC {
		return errors.New("grpc_reflection: needs grpc (reflection describes the gRPC service)")
	}
	return nil
}

// unmarshalGRPC parses the grpc option (XPORT-2):
//
//	grpc [{
//		reflection
//		listen   <host:port>
//		tls_cert <file>
//		tls_key  <file>
//	}]
func (h *AgentHandler) unmarshalGRPC(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	h.GRPC = true
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "reflection":
			if d.NextArg() {
				return d.ArgErr()
			}
			h.GRPCReflection = true
		case "listen", "tls_cert", "tls_key":
			if err := h.unmarshalGRPCListen(d); err != nil {
				return err
			}
		default:
			return d.Errf("unknown grpc option %q", d.Val())
		}
	}
	return nil
}
