package grpc

import (
	"context"

	"go.uber.org/zap"
	grpclib "google.golang.org/grpc"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The gRPC server runs each call on a goroutine of its own, outside the
// HTTP server's panic recovery: these interceptors turn a panic into the
// sanitised INTERNAL status (and one log line) instead of a crashed
// gateway.

func (s *Server) recovered(method string, err *error) {
	if p := recover(); p != nil {
		s.logger.Error("a2a grpc: panic in a call", zap.String("method", method), zap.Any("panic", p))
		*err = Status(a2a.ErrInternal()).Err()
	}
}

func (s *Server) recoverUnary(ctx context.Context, req any, info *grpclib.UnaryServerInfo, h grpclib.UnaryHandler) (resp any, err error) {
	defer s.recovered(info.FullMethod, &err)
	return h(ctx, req)
}

func (s *Server) recoverStream(srv any, ss grpclib.ServerStream, info *grpclib.StreamServerInfo, h grpclib.StreamHandler) (err error) {
	defer s.recovered(info.FullMethod, &err)
	return h(srv, ss)
}
