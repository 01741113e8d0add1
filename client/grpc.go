package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	gpj "google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

// BindingGRPC selects the official A2A gRPC binding (Options.Binding).
const BindingGRPC = "grpc"

// grpcService is the full name of the A2A 1.0 gRPC service.
const grpcService = "/lf.a2a.v1.A2AService/"

// GRPCMessages returns fresh request and response messages of an A2A
// method over the gRPC binding (lf.a2a.v1.A2AService), nil for a method
// the service does not have.
func GRPCMessages(method string) (req, resp proto.Message) {
	switch method {
	case a2a.MethodSendMessage:
		return new(pb.SendMessageRequest), new(pb.SendMessageResponse)
	case a2a.MethodSendStreamingMessage:
		return new(pb.SendMessageRequest), new(pb.StreamResponse)
	case a2a.MethodSubscribeToTask:
		return new(pb.SubscribeToTaskRequest), new(pb.StreamResponse)
	case a2a.MethodGetTask:
		return new(pb.GetTaskRequest), new(pb.Task)
	case a2a.MethodListTasks:
		return new(pb.ListTasksRequest), new(pb.ListTasksResponse)
	case a2a.MethodCancelTask:
		return new(pb.CancelTaskRequest), new(pb.Task)
	case a2a.MethodCreatePushConfig:
		return new(pb.TaskPushNotificationConfig), new(pb.TaskPushNotificationConfig)
	case a2a.MethodGetPushConfig:
		return new(pb.GetTaskPushNotificationConfigRequest), new(pb.TaskPushNotificationConfig)
	case a2a.MethodListPushConfigs:
		return new(pb.ListTaskPushNotificationConfigsRequest), new(pb.ListTaskPushNotificationConfigsResponse)
	case a2a.MethodDeletePushConfig:
		return new(pb.DeleteTaskPushNotificationConfigRequest), new(emptypb.Empty)
	case a2a.MethodGetExtendedAgentCard:
		return new(pb.GetExtendedAgentCardRequest), new(pb.AgentCard)
	}
	return nil, nil
}

// grpcTarget is the dial target of a GRPC interface URL: host:port as the
// card gives it, or the host and port of a URL (default port by scheme).
func grpcTarget(s string) (string, bool) {
	if u, err := url.Parse(s); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
		if u.Port() != "" {
			return u.Host, true
		}
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		return net.JoinHostPort(u.Hostname(), port), true
	}
	host, port, err := net.SplitHostPort(s)
	return s, err == nil && host != "" && port != ""
}

// grpcTransport is the official A2A gRPC binding (lf.a2a.v1.A2AService).
type grpcTransport struct {
	conn *grpc.ClientConn
	opts Options
}

// dialGRPC opens the (lazy) connection to a GRPC interface: TLS with the
// TLS settings of Options.HTTPClient's transport when it has some, the
// system roots otherwise; plaintext h2c with Options.GRPCPlaintext.
func dialGRPC(in a2a.AgentInterface, o Options, hc *http.Client) (*grpcTransport, error) {
	target, ok := grpcTarget(in.URL)
	if !ok {
		return nil, protocolf("bad gRPC interface URL %q: want host:port", cardfetch.RedactURL(in.URL))
	}
	creds := insecure.NewCredentials()
	if !o.GRPCPlaintext {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tr, ok := hc.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
			cfg = tr.TLSClientConfig.Clone()
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxResponseSize))}
	if o.UserAgent != "" {
		opts = append(opts, grpc.WithUserAgent(o.UserAgent))
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, transportErr("connecting to "+target, err)
	}
	return &grpcTransport{conn: conn, opts: o}, nil
}

// Close implements Transport.
func (c *grpcTransport) Close() error { return c.conn.Close() }

// grpcContext carries the request headers as gRPC metadata: A2A-Version,
// the credentials and Options.Headers, as over HTTP.
func (c *grpcTransport) grpcContext(ctx context.Context) context.Context {
	h := http.Header{}
	for k, v := range c.opts.Headers {
		h[k] = v
	}
	c.opts.Auth.apply(h)
	h.Set("A2A-Version", a2a.ProtocolVersion)
	md := metadata.MD{}
	for k, v := range h {
		md[strings.ToLower(k)] = v
	}
	return metadata.NewOutgoingContext(ctx, md)
}

// grpcEncode renders params (a JSON-RPC params value, which is the proto
// request message as ProtoJSON) into the request message of method.
func grpcEncode(method string, params any) (req, resp proto.Message, err error) {
	req, resp = GRPCMessages(method)
	if req == nil {
		return nil, nil, usagef("%s is not a method of the A2A gRPC service", method)
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, nil, usagef("encoding the request: %v", err)
	}
	if err := (gpj.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, req); err != nil {
		return nil, nil, usagef("encoding the %s request: %v", method, err)
	}
	return req, resp, nil
}

// grpcDecode renders a response message into out (nil: discarded).
func grpcDecode(method string, m proto.Message, out any) error {
	if out == nil {
		return nil
	}
	b, err := gpj.Marshal(m)
	if err == nil {
		err = json.Unmarshal(b, out)
	}
	if err != nil {
		return protocolf("%s: bad result: %v", method, err)
	}
	return nil
}

// Call implements Transport: a unary method over gRPC.
func (c *grpcTransport) Call(ctx context.Context, method string, params, out any) error {
	req, resp, err := grpcEncode(method, params)
	if err != nil {
		return err
	}
	if err := c.conn.Invoke(c.grpcContext(ctx), grpcService+method, req, resp); err != nil {
		return c.grpcErr(ctx, method, err)
	}
	return grpcDecode(method, resp, out)
}

// Stream implements Transport: a server-streaming method over gRPC.
func (c *grpcTransport) Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	req, _, err := grpcEncode(method, params)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := c.conn.NewStream(c.grpcContext(ctx), &grpc.StreamDesc{ServerStreams: true}, grpcService+method)
	if err == nil {
		if err = st.SendMsg(req); err == nil {
			err = st.CloseSend()
		}
	}
	for err == nil {
		ev := new(pb.StreamResponse)
		if err = st.RecvMsg(ev); err != nil {
			break
		}
		var out a2a.StreamResponse
		if err := grpcDecode(method, ev, &out); err != nil {
			return err
		}
		if err := fn(out); err != nil {
			return err
		}
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return c.grpcErr(ctx, method, err)
}

// grpcErr classifies a gRPC error like the HTTP ones: an A2A error from
// the ErrorInfo reason, an auth error for UNAUTHENTICATED and
// PERMISSION_DENIED, a transport error otherwise.
func (c *grpcTransport) grpcErr(ctx context.Context, method string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return transportErr(method+" timed out", nil)
		}
		return &Error{Kind: KindInterrupted, Msg: "interrupted"}
	}
	st := status.Convert(err)
	switch st.Code() {
	case codes.Unauthenticated:
		return unauthenticated("gRPC UNAUTHENTICATED", "", c.opts.Auth.sentIn(c.opts.Headers))
	case codes.PermissionDenied:
		return denied("gRPC PERMISSION_DENIED", st.Message(), c.opts.Auth.sentIn(c.opts.Headers))
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == a2a.ErrorDomain {
			return rpcErr(method, &a2a.Error{Code: reasonCode(info.GetReason()), Message: st.Message(), Metadata: info.GetMetadata()})
		}
	}
	return transportErr(method+" over gRPC: "+st.Code().String(), errors.New(st.Message()))
}

// reasonCode is the JSON-RPC code of an ErrorInfo reason (internal error
// when unknown).
func reasonCode(reason string) int {
	if code, ok := a2a.CodeForReason(reason); ok {
		return code
	}
	return a2a.CodeInternalError
}
