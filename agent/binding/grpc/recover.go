package grpc

import (
	"context"

	grpclib "google.golang.org/grpc"
)

// The Server's own panic recovery is its Bridge's; the dedicated
// listener (listen.go) chains these too.

func (s *Server) recoverUnary(ctx context.Context, req any, info *grpclib.UnaryServerInfo, h grpclib.UnaryHandler) (any, error) {
	return s.b.RecoverUnary(ctx, req, info, h)
}

func (s *Server) recoverStream(srv any, ss grpclib.ServerStream, info *grpclib.StreamServerInfo, h grpclib.StreamHandler) error {
	return s.b.RecoverStream(srv, ss, info, h)
}
