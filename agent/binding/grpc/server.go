// Package grpc serves an agent.Handler as the official A2A 1.0 gRPC
// service, lf.a2a.v1.A2AService (XPORT-2), with the generated code the
// official Go SDK publishes (github.com/a2aproject/a2a-go/v2/a2apb/v1).
//
// The server is reached through ServeHTTP from an HTTP/2 handler (TLS or
// h2c) on the same site and port as the other bindings, and optionally
// also through NewListener, grpc-go's own transport on a listener of its
// own (issue 29). Every RPC is the service operation of the same
// name with the same errors, version and extension rules, owner scope and
// metrics as JSON-RPC; the request metadata a2a-version and a2a-extensions
// are the A2A-Version and A2A-Extensions headers, and the activated
// extensions are echoed in the a2a-extensions response header.
package grpc

import (
	"context"
	"net/http"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"go.uber.org/zap"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// Server is the gRPC binding of one agent.Handler.
type Server struct {
	h      agent.Handler
	b      *Bridge
	gs     *grpclib.Server // b's
	tc     httpx.TransportConfig
	logger *zap.Logger
}

// Option configures a Server built by New.
type Option func(*options)

type options struct {
	reflection bool
}

// WithReflection also serves gRPC server reflection (the
// grpc.reflection.v1 and v1alpha ServerReflection services) describing
// lf.a2a.v1.A2AService, so tools such as grpcurl can list and call it
// without the .proto files. Reflection calls are not A2A operations: they
// reach no Handler and are not counted in the A2A metrics. Without it a
// reflection call is UNIMPLEMENTED like any unknown service.
func WithReflection() Option {
	return func(o *options) { o.reflection = true }
}

// New returns the gRPC binding of h. tc supplies the request size limit
// (MaxBodyBytes bounds every received message) and the base URL of a call;
// its defaults are applied. logger receives the panics the server
// recovers from (nil: none are logged).
func New(h agent.Handler, tc httpx.TransportConfig, logger *zap.Logger, opts ...Option) *Server {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	tc = tc.WithDefaults()
	if logger == nil {
		logger = zap.NewNop()
	}
	s := &Server{h: h, tc: tc, logger: logger}
	s.b = NewBridge(tc.MaxBodyBytes, logger, "grpc", grpclib.UnknownServiceHandler(s.unknownMethod))
	s.gs = s.b.Server()
	pb.RegisterA2AServiceServer(s.gs, &service{s: s})
	if o.reflection {
		reflection.Register(s.gs)
	}
	return s
}

// callKey carries the agent.Call of a request into the RPC handlers.
type callKey struct{}

// ServeHTTP answers one gRPC request (see IsGRPC) for the authenticated
// principal ("" when auth is off). The call is built from the request's
// headers, which are its gRPC metadata, exactly as for JSON-RPC.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request, principal string) {
	call := s.tc.NewCall(r, agent.BindingGRPC, principal, "")
	s.b.ServeHTTP(w, r, context.WithValue(r.Context(), callKey{}, call))
}

// Close refuses new requests (UNAVAILABLE) and releases the gRPC server
// once the requests in flight have ended; those are not cut short, so a
// stream outlives a config reload like an SSE stream does. It does not
// block.
func (s *Server) Close() { s.b.Close() }
