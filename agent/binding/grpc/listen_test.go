package grpc

import (
	"context"
	"net"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
)

// recorder records the call and context deadline of every send it passes on.
type recorder struct {
	agent.Handler
	mu       sync.Mutex
	calls    []agent.Call
	deadline []bool
}

func (r *recorder) record(ctx context.Context, c agent.Call) {
	_, ok := ctx.Deadline()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
	r.deadline = append(r.deadline, ok)
}

func (r *recorder) last(t *testing.T) (agent.Call, bool) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.calls) == 0 {
		t.Fatal("the handler saw no call")
	}
	return r.calls[len(r.calls)-1], r.deadline[len(r.calls)-1]
}

func (r *recorder) SendMessage(ctx context.Context, c agent.Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	r.record(ctx, c)
	return r.Handler.SendMessage(ctx, c, req)
}

func (r *recorder) SendStreamingMessage(ctx context.Context, c agent.Call, req *a2a.SendMessageRequest) (agent.Stream, error) {
	r.record(ctx, c)
	return r.Handler.SendStreamingMessage(ctx, c, req)
}

// startListener serves a recorded Service on a native Listener admitting
// "Bearer good" as alice (scope s1, an expiry), refusing "Bearer busy"
// with UNAVAILABLE and everything else as unauthenticated.
func startListener(t *testing.T) (pb.A2AServiceClient, *recorder, *Listener, chan error) {
	t.Helper()
	svc, _ := agenttest.Service(t, agent.Config{Extensions: []string{"urn:x:ext"}})
	rec := &recorder{Handler: agent.NewHandler(svc)}
	srv := New(rec, httpx.TransportConfig{}, nil)
	gate := func(r *http.Request) (Admission, error) {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			return Admission{Principal: "alice", Identity: &agent.Identity{Scopes: []string{"s1"}}, Expires: time.Now().Add(time.Hour)}, nil
		case "Bearer busy":
			return Admission{}, status.Error(codes.Unavailable, "busy")
		}
		return Admission{}, a2a.ErrUnauthenticated()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	nl := srv.NewListener(gate, nil, false)
	served := make(chan error, 1)
	go func() { served <- nl.Serve(ln) }()
	conn, err := grpclib.NewClient(ln.Addr().String(), grpclib.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(); nl.Close(); srv.Close() })
	return pb.NewA2AServiceClient(conn), rec, nl, served
}

// issue 29, XPORT-2, AUTH-8, AUTH-10: the listener's interceptors give
// every RPC the call ServeHTTP gives (binding, version, extensions,
// principal, identity) with the credential's expiry as its deadline.
func TestListenerCall(t *testing.T) {
	client, rec, _, _ := startListener(t)
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer good", "a2a-version", "1.0", "a2a-extensions", "urn:x:ext")
	if _, err := client.SendMessage(ctx, userMessage("unary")); err != nil {
		t.Fatal(err)
	}
	check := func(kind string) {
		c, deadline := rec.last(t)
		if c.Binding != agent.BindingGRPC || c.Principal != "alice" || c.Version != "1.0" || !slices.Contains(c.Extensions, "urn:x:ext") ||
			c.Identity == nil || !slices.Equal(c.Identity.Scopes, []string{"s1"}) || !deadline {
			t.Errorf("%s call = %+v (identity %+v, deadline %v), want grpc/alice/1.0/urn:x:ext/s1 with a deadline", kind, c, c.Identity, deadline)
		}
	}
	check("unary")
	stream, err := client.SendStreamingMessage(ctx, userMessage("stream"))
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := stream.Recv(); err != nil || ev.GetTask() == nil {
		t.Fatalf("first stream event %v, %v", ev, err)
	}
	check("stream")
}

// The gate's refusals: an A2A error (unauthenticated) as its status with
// the ErrorInfo of the ServeHTTP path, a gRPC status as it is; the handler
// sees neither call.
func TestListenerRefusals(t *testing.T) {
	client, rec, _, _ := startListener(t)
	for _, auth := range []string{"", "Bearer wrong"} {
		ctx := v1(context.Background())
		if auth != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "authorization", auth)
		}
		_, err := client.SendMessage(ctx, userMessage("x"))
		code, info := errorInfo(t, err)
		if code != codes.Unauthenticated || info.GetReason() != "UNAUTHENTICATED" || info.GetDomain() != a2a.ErrorDomain {
			t.Errorf("auth %q: %v %v, want UNAUTHENTICATED with ErrorInfo UNAUTHENTICATED", auth, code, info)
		}
		stream, err := client.SendStreamingMessage(ctx, userMessage("x"))
		if err == nil {
			_, err = stream.Recv()
		}
		if code, _ := errorInfo(t, err); code != codes.Unauthenticated {
			t.Errorf("stream, auth %q: %v, want UNAUTHENTICATED", auth, code)
		}
	}
	_, err := client.SendMessage(metadata.AppendToOutgoingContext(v1(context.Background()), "authorization", "Bearer busy"), userMessage("x"))
	if status.Code(err) != codes.Unavailable {
		t.Errorf("busy gate: %v, want UNAVAILABLE", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.calls) != 0 {
		t.Errorf("the handler saw %d refused calls", len(rec.calls))
	}
}

// Close ends Serve with nil and refuses new connections.
func TestListenerClose(t *testing.T) {
	_, _, nl, served := startListener(t)
	nl.Close()
	nl.Close() // idempotent
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve after Close = %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after Close")
	}
}
