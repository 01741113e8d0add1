package grpc

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"sync"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Admission is what a Gate learned about the caller of one RPC on a
// listener of the binding's own: the same principal, identity (scopes and
// claims, AUTH-8) and credential expiry (AUTH-10) as the site's a2a_auth
// hands to ServeHTTP.
type Admission struct {
	// Principal is the authenticated caller ("" when auth is off).
	Principal string
	// Identity holds the credential's scopes and claims (nil: none).
	Identity *agent.Identity
	// Expires, when set, ends the RPC's access: its context ends then,
	// so a stream opened with a JWT ends when the token expires (AUTH-10).
	Expires time.Time
}

// Gate admits one RPC served by a Listener. r is the RPC seen as an HTTP
// request: its metadata as headers (authorization, the API key header,
// a2a-version …), :authority as Host and the full method as the path. An
// error refuses the RPC: an A2A error with its gRPC status (Status; so
// a2a.ErrUnauthenticated gives UNAUTHENTICATED with the ErrorInfo of the
// ServeHTTP path), a gRPC status error as it is, anything else INTERNAL.
type Gate func(r *http.Request) (Admission, error)

// Listener serves the binding's services with grpc-go's own HTTP/2
// transport on a listener of its own (issue 29: about a third less CPU
// per call than ServeHTTP behind an HTTP server). Every RPC gets the
// agent.Call ServeHTTP would build from the same metadata: binding GRPC,
// A2A-Version from a2a-version, A2A-Extensions from a2a-extensions, and
// the principal, identity and expiry the Gate admits.
type Listener struct {
	s     *Server
	gs    *grpclib.Server
	gate  Gate
	extra []Service

	once sync.Once
	done chan struct{}
}

// Service is another gRPC service a Listener serves next to
// lf.a2a.v1.A2AService (the gRPC JSON-RPC envelope, XPORT-6), admitted by
// the same gate.
type Service struct {
	// Prefix is the service's method prefix, "/<package>.<Service>/".
	Prefix string
	// Binding is the binding label of its calls (agent.Call.Binding).
	Binding string
	// Register adds the service's implementation to the listener's server.
	Register func(grpclib.ServiceRegistrar)
	// WithCall returns ctx carrying the call of one of its RPCs, where the
	// service's handlers read it.
	WithCall func(ctx context.Context, c agent.Call) context.Context
}

// NewListener returns the native server of s, admitting every RPC through
// gate (nil: all, without a principal). creds are the transport
// credentials (nil: plaintext h2c, which the caller must keep to loopback
// addresses). reflection serves gRPC server reflection too (see
// WithReflection). extra are further services served on the same
// listener.
func (s *Server) NewListener(gate Gate, creds credentials.TransportCredentials, reflect bool, extra ...Service) *Listener {
	if gate == nil {
		gate = func(*http.Request) (Admission, error) { return Admission{}, nil }
	}
	limit := s.tc.MaxBodyBytes
	if limit > math.MaxInt32 {
		limit = math.MaxInt32
	}
	n := &Listener{s: s, gate: gate, extra: extra, done: make(chan struct{})}
	opts := []grpclib.ServerOption{grpclib.MaxRecvMsgSize(int(limit)),
		grpclib.ChainUnaryInterceptor(s.recoverUnary, n.unary),
		grpclib.ChainStreamInterceptor(s.recoverStream, n.stream),
		grpclib.UnknownServiceHandler(s.unknownMethod)}
	if creds != nil {
		opts = append(opts, grpclib.Creds(creds))
	}
	n.gs = grpclib.NewServer(opts...)
	pb.RegisterA2AServiceServer(n.gs, &service{s: s})
	for _, x := range extra {
		x.Register(n.gs)
	}
	if reflect {
		reflection.Register(n.gs)
	}
	return n
}

// Serve accepts connections on l until Close; it returns nil after Close.
func (n *Listener) Serve(l net.Listener) error {
	err := n.gs.Serve(l)
	select {
	case <-n.done:
		return nil
	default:
		return err
	}
}

// Close stops accepting connections and asks the clients to go away
// (HTTP/2 GOAWAY); the RPCs in flight are not cut short, so a stream
// outlives a config reload as on the ServeHTTP path. It does not block.
func (n *Listener) Close() {
	n.once.Do(func() {
		close(n.done)
		go n.gs.GracefulStop()
	})
}

// unary admits a unary RPC and gives it its agent.Call.
func (n *Listener) unary(ctx context.Context, req any, info *grpclib.UnaryServerInfo, h grpclib.UnaryHandler) (any, error) {
	ctx, cancel, err := n.admit(ctx, info.FullMethod)
	if err != nil {
		return nil, err
	}
	defer cancel()
	return h(ctx, req)
}

// stream admits a streaming RPC and gives it its agent.Call.
func (n *Listener) stream(srv any, ss grpclib.ServerStream, info *grpclib.StreamServerInfo, h grpclib.StreamHandler) error {
	ctx, cancel, err := n.admit(ss.Context(), info.FullMethod)
	if err != nil {
		return err
	}
	defer cancel()
	return h(srv, callStream{ss, ctx})
}

// admit runs the gate on the RPC's metadata and returns the context
// carrying its call, bounded by the credential's expiry.
func (n *Listener) admit(ctx context.Context, method string) (context.Context, context.CancelFunc, error) {
	r := n.request(ctx, method)
	adm, err := n.gate(r)
	if err != nil {
		var e *a2a.Error
		if _, isStatus := status.FromError(err); isStatus && !errors.As(err, &e) {
			return nil, nil, err // a gRPC status of the gate's own (UNAVAILABLE …)
		}
		return nil, nil, Status(err).Err()
	}
	if adm.Identity != nil {
		r = r.WithContext(agent.WithIdentity(r.Context(), adm.Identity))
	}
	binding, withCall := agent.BindingGRPC, func(ctx context.Context, c agent.Call) context.Context {
		return context.WithValue(ctx, callKey{}, c)
	}
	for _, x := range n.extra {
		if strings.HasPrefix(method, x.Prefix) {
			binding, withCall = x.Binding, x.WithCall
		}
	}
	ctx = withCall(r.Context(), n.s.tc.NewCall(r, binding, adm.Principal, ""))
	if adm.Expires.IsZero() {
		return ctx, func() {}, nil
	}
	ctx, cancel := context.WithDeadline(ctx, adm.Expires)
	return ctx, cancel, nil
}

// request is the RPC as the HTTP request ServeHTTP would have seen:
// metadata as headers, :authority as Host.
func (n *Listener) request(ctx context.Context, method string) *http.Request {
	md, _ := metadata.FromIncomingContext(ctx)
	h := make(http.Header, len(md))
	host := ""
	for k, vs := range md {
		if k == ":authority" {
			if len(vs) > 0 {
				host = vs[0]
			}
			continue
		}
		if strings.HasPrefix(k, ":") {
			continue
		}
		h[textproto.CanonicalMIMEHeaderKey(k)] = vs
	}
	r := &http.Request{Method: http.MethodPost, Proto: "HTTP/2.0", ProtoMajor: 2, Header: h, Host: host,
		URL: &url.URL{Path: method}, RequestURI: method}
	if p, ok := peer.FromContext(ctx); ok {
		r.RemoteAddr = p.Addr.String()
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok {
			r.TLS = &ti.State // the base URL is https
		}
	}
	return r.WithContext(ctx)
}

// callStream is a ServerStream whose context carries the call.
type callStream struct {
	grpclib.ServerStream
	ctx context.Context
}

// Context implements grpc.ServerStream.
func (c callStream) Context() context.Context { return c.ctx }
