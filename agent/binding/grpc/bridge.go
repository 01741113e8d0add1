package grpc

import (
	"context"
	"math"
	"net/http"
	"sync"

	"go.uber.org/zap"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/codes"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Bridge is a grpc.Server reached through ServeHTTP from an HTTP/2
// handler, with the lifecycle both gRPC bindings (the official service and
// the JSON-RPC envelope) need: panics turned into a sanitised INTERNAL
// status, and a Close that refuses new requests but lets those in flight
// (a stream among them) end, so a config reload cuts nothing short.
type Bridge struct {
	gs     *grpclib.Server
	logger *zap.Logger
	label  string // names the binding in the panic log line

	mu       sync.Mutex
	closed   bool
	inflight sync.WaitGroup
}

// NewBridge builds the bridge's grpc.Server: received messages are
// bounded by maxBytes (clamped to what grpc-go takes), opts are added.
// label names the binding in logs ("grpc", "grpc-jsonrpc"); logger nil
// logs nothing. Register the services on Server() before serving.
func NewBridge(maxBytes int64, logger *zap.Logger, label string, opts ...grpclib.ServerOption) *Bridge {
	if maxBytes > math.MaxInt32 {
		maxBytes = math.MaxInt32
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	b := &Bridge{logger: logger, label: label}
	all := append([]grpclib.ServerOption{grpclib.MaxRecvMsgSize(int(maxBytes)),
		grpclib.ChainUnaryInterceptor(b.RecoverUnary), grpclib.ChainStreamInterceptor(b.RecoverStream)}, opts...)
	b.gs = grpclib.NewServer(all...)
	return b
}

// Server is the grpc.Server the services are registered on.
func (b *Bridge) Server() *grpclib.Server { return b.gs }

// ServeHTTP answers one gRPC request with ctx as its context (the
// binding's call rides in it); UNAVAILABLE once Close was called.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request, ctx context.Context) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		WriteStatus(w, codes.Unavailable, "the server is stopping")
		return
	}
	b.inflight.Add(1)
	b.mu.Unlock()
	defer b.inflight.Done()
	b.gs.ServeHTTP(flushWriter{w}, r.WithContext(ctx))
}

// Close refuses new requests (UNAVAILABLE) and stops the grpc.Server once
// the requests in flight have ended; those are not cut short. It does not
// block.
func (b *Bridge) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	go func() {
		b.inflight.Wait()
		b.gs.Stop()
	}()
}

// The gRPC server runs each call on a goroutine of its own, outside the
// HTTP server's panic recovery: these interceptors turn a panic into the
// sanitised INTERNAL status (and one log line) instead of a crashed
// gateway.

func (b *Bridge) recovered(method string, err *error) {
	if p := recover(); p != nil {
		b.logger.Error("a2a "+b.label+": panic in a call", zap.String("method", method), zap.Any("panic", p))
		*err = Status(a2a.ErrInternal()).Err()
	}
}

// RecoverUnary is the unary interceptor that recovers a call's panic.
func (b *Bridge) RecoverUnary(ctx context.Context, req any, info *grpclib.UnaryServerInfo, h grpclib.UnaryHandler) (resp any, err error) {
	defer b.recovered(info.FullMethod, &err)
	return h(ctx, req)
}

// RecoverStream is the stream interceptor that recovers a call's panic.
func (b *Bridge) RecoverStream(srv any, ss grpclib.ServerStream, info *grpclib.StreamServerInfo, h grpclib.StreamHandler) (err error) {
	defer b.recovered(info.FullMethod, &err)
	return h(srv, ss)
}

// flushWriter gives grpc-go's ServeHTTP a Flusher over any response
// writer that can flush through http.ResponseController (Caddy's wrappers).
type flushWriter struct{ http.ResponseWriter }

// Flush flushes through the wrapped writer's ResponseController.
func (w flushWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap exposes the wrapped writer to http.ResponseController.
func (w flushWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
