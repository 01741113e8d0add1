package grpc

import (
	grpclib "google.golang.org/grpc"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// unknownMethod answers a call of a method (or service) the server does
// not have as the other bindings answer an unknown method: UNIMPLEMENTED
// with a google.rpc.ErrorInfo METHOD_NOT_FOUND (A2A 1.0 §10, XPORT-2),
// counted under method "unknown". The method name is not echoed.
func (s *Server) unknownMethod(_ any, ss grpclib.ServerStream) error {
	ctx := ss.Context()
	err := s.h.Refuse(ctx, callOf(ctx), "", &a2a.Error{Code: a2a.CodeMethodNotFound, Message: "Method not found"})
	return Status(err).Err()
}
