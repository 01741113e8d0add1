// Package grpcjsonrpc serves the seed system's gRPC JSON-RPC envelope
// service, iac_code.a2a.transports.proto.A2AJsonRpc (XPORT-6,
// `grpc-jsonrpc`): each envelope's payload is one JSON-RPC 2.0 request
// object, run through the carrier-neutral jsonrpc.Dispatcher like the
// WebSocket, stdio and Redis Streams carriers, so the methods, errors,
// version and extension rules, limits, tenants and metrics (binding label
// grpc-jsonrpc) are those of JSON-RPC over HTTP.
//
// Like the official gRPC binding (package grpc) it has no listener of its
// own: the a2a handler hands it HTTP/2 gRPC requests (TLS, or h2c) whose
// path is the service's. The request metadata a2a-version and
// a2a-extensions are the A2A-Version and A2A-Extensions headers, as over
// HTTP.
//
// Answers:
//   - Send: one envelope holding the JSON-RPC response (an empty payload
//     for a notification). A streaming method on Send is refused with a
//     JSON-RPC error (-32600) naming Stream, before any turn starts.
//   - Stream: one envelope per event (a JSON-RPC response whose result is
//     the event); the last envelope has final set and its payload gets the
//     member "final": true. A stream that ends without an event, or whose
//     last event was already sent, ends with the envelope
//     {"jsonrpc":"2.0","id":…,"final":true}. A unary method on Stream is
//     answered with one final envelope.
//   - A payload that is not JSON, or not one JSON object (a batch array,
//     a string), is answered like the other frame carriers answer it: an
//     envelope with a JSON-RPC error (-32700 parse error, -32600 invalid
//     request, id null) and gRPC status OK. gRPC statuses are left to what
//     happens outside JSON-RPC: UNAUTHENTICATED from a2a_auth,
//     RESOURCE_EXHAUSTED for an envelope above the size limit, UNAVAILABLE
//     while the server stops, UNIMPLEMENTED for an unknown method.
package grpcjsonrpc

import (
	"context"
	"net/http"
	"strings"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// ServiceName is the full name of the envelope service.
const ServiceName = "iac_code.a2a.transports.proto.A2AJsonRpc"

// servicePrefix is the path prefix of the service's methods.
const servicePrefix = "/" + ServiceName + "/"

// Server is the gRPC JSON-RPC envelope binding of one dispatcher.
type Server struct {
	d  *jsonrpc.Dispatcher
	tc httpx.TransportConfig
	b  *a2agrpc.Bridge
}

// Config configures a Server built by New.
type Config struct {
	// Tenants, when set, serves a payload whose params name the tenant of
	// another agent of the site with that agent's dispatcher (TURN-10, see
	// jsonrpc.Tenants). Nil: every payload is served by the dispatcher
	// given to New.
	Tenants jsonrpc.Tenants
	// Logger receives the panics the server recovers from. Nil: none are
	// logged.
	Logger *zap.Logger
}

// New returns the envelope binding of d. tc supplies the size limit
// (MaxBodyBytes bounds every received envelope; a larger one is refused
// with RESOURCE_EXHAUSTED) and the base URL of a call; its defaults are
// applied.
func New(d *jsonrpc.Dispatcher, tc httpx.TransportConfig, cfg Config) *Server {
	tc = tc.WithDefaults()
	if cfg.Tenants != nil {
		d = d.WithTenants(cfg.Tenants)
	}
	s := &Server{d: d, tc: tc, b: a2agrpc.NewBridge(tc.MaxBodyBytes, cfg.Logger, "grpc-jsonrpc")}
	envelopepb.RegisterA2AJsonRpcServer(s.b.Server(), &service{s: s})
	return s
}

// Handles reports whether r is a gRPC request (a2agrpc.IsGRPC) to the
// envelope service.
func Handles(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, servicePrefix) && a2agrpc.IsGRPC(r)
}

// callKey carries the agent.Call of a request into the RPC handlers.
type callKey struct{}

// ServeHTTP answers one gRPC request for the authenticated principal (""
// when auth is off); the call is built from the request's headers, which
// are its gRPC metadata, exactly as for JSON-RPC over HTTP. A request to
// another gRPC service is answered UNIMPLEMENTED.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request, principal string) {
	call := s.tc.NewCall(r, agent.BindingGRPCJSONRPC, principal, "")
	s.b.ServeHTTP(w, r, context.WithValue(r.Context(), callKey{}, call))
}

// Close refuses new requests (UNAVAILABLE) and releases the gRPC server
// once the requests in flight have ended; those are not cut short, so a
// stream outlives a config reload. It does not block.
func (s *Server) Close() { s.b.Close() }
