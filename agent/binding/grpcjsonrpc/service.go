package grpcjsonrpc

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"

	grpclib "google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
)

// Carrier-level refusals, answered in an error envelope (XPORT-6).
var (
	errParse     = a2a.NewError(a2a.CodeParseError, "Parse error: the envelope's payload is not valid JSON")
	errNotObject = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the envelope's payload must be one JSON-RPC 2.0 request object")
	errStreaming = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a streaming method (SendStreamingMessage, SubscribeToTask) must be called with A2AJsonRpc/Stream, not Send")
)

// service implements envelopepb.A2AJsonRpcServer.
type service struct {
	envelopepb.UnimplementedA2AJsonRpcServer
	s *Server
}

// callOf returns the call ServeHTTP stored in ctx.
func callOf(ctx context.Context) agent.Call {
	c, _ := ctx.Value(callKey{}).(agent.Call)
	c.Info = new(agent.RequestInfo) // receives this call's activated extensions
	return c
}

// checkPayload refuses a payload that is not one JSON object, as the
// WebSocket carrier refuses such a frame.
func checkPayload(p []byte) *a2a.Error {
	p = bytes.TrimSpace(p)
	if !json.Valid(p) {
		return errParse
	}
	if p[0] != '{' {
		return errNotObject
	}
	return nil
}

// envelope wraps one JSON-RPC object.
func envelope(payload []byte, final bool) *envelopepb.JsonRpcEnvelope {
	return &envelopepb.JsonRpcEnvelope{Payload: payload, Final: final}
}

// Send implements A2AJsonRpc.Send: one request, one response envelope
// (final, like the only envelope of an answer is).
func (v *service) Send(ctx context.Context, in *envelopepb.JsonRpcEnvelope) (*envelopepb.JsonRpcEnvelope, error) {
	d, c, p := v.s.d, callOf(ctx), in.GetPayload()
	if perr := checkPayload(p); perr != nil {
		return envelope(d.Refuse(ctx, c, nil, "", perr).Response, true), nil
	}
	if d.Streaming(p) {
		id, method := payloadID(p)
		return envelope(d.Refuse(ctx, c, id, method, errStreaming).Response, true), nil
	}
	out := d.Handle(ctx, c, p)
	if out.Stream != nil { // not a streaming method (checked above): never
		out.Stream.Close()
		return nil, status.Error(codes.Internal, a2a.ErrInternal().Message)
	}
	echoExtensions(func(md metadata.MD) error { return grpclib.SetHeader(ctx, md) }, out.Extensions)
	return envelope(out.Response, true), nil
}

// Stream implements A2AJsonRpc.Stream: one envelope per event, the last
// one final (see pump); a unary method's answer or a refusal is one final
// envelope.
func (v *service) Stream(in *envelopepb.JsonRpcEnvelope, ss grpclib.ServerStreamingServer[envelopepb.JsonRpcEnvelope]) error {
	ctx := ss.Context()
	d, c, p := v.s.d, callOf(ctx), in.GetPayload()
	if perr := checkPayload(p); perr != nil {
		return ss.Send(envelope(d.Refuse(ctx, c, nil, "", perr).Response, true))
	}
	out := d.Handle(ctx, c, p)
	echoExtensions(ss.SetHeader, out.Extensions)
	if out.Stream == nil {
		return ss.Send(envelope(out.Response, true))
	}
	return pump(ctx, out.Stream, out.ID, func(payload []byte, final bool) error {
		return ss.Send(envelope(payload, final))
	})
}

// echoExtensions sends the activated extensions (RPC-3) in the
// a2a-extensions response header, as the official gRPC binding does.
func echoExtensions(set func(metadata.MD) error, active []string) {
	if len(active) > 0 {
		_ = set(metadata.Pairs("a2a-extensions", strings.Join(active, ", ")))
	}
}

// payloadID reads the JSON-RPC id and method of a payload, for a refusal.
func payloadID(p []byte) (json.RawMessage, string) {
	var r struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(p, &r) != nil {
		return nil, ""
	}
	switch t := bytes.TrimSpace(r.ID); {
	case len(t) == 0, t[0] == '"', t[0] == '-', t[0] >= '0' && t[0] <= '9', string(t) == "null":
		return r.ID, r.Method
	}
	return nil, r.Method
}
