package grpcjsonrpc

import (
	"context"

	grpclib "google.golang.org/grpc"

	"github.com/caddy-a2a/caddy-a2a/agent"
	a2agrpc "github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
)

// ListenerService returns the envelope service for a2agrpc's dedicated
// listener (grpc listen, issue 29): the same handlers, dispatcher and
// tenants as ServeHTTP, with calls labelled grpc-jsonrpc.
func (s *Server) ListenerService() a2agrpc.Service {
	return a2agrpc.Service{
		Prefix:   servicePrefix,
		Binding:  agent.BindingGRPCJSONRPC,
		Register: func(reg grpclib.ServiceRegistrar) { envelopepb.RegisterA2AJsonRpcServer(reg, &service{s: s}) },
		WithCall: func(ctx context.Context, c agent.Call) context.Context { return context.WithValue(ctx, callKey{}, c) },
	}
}
