// Package jsonrpc is the JSON-RPC 2.0 binding of an agent.Handler (RPC-1,
// RPC-1a): it decodes a POST body, calls the handler and encodes the
// answer, a JSON document or an SSE stream. Its Dispatcher serves the
// frame carriers (WebSocket, stdio, Redis Streams) too.
package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/protojson"
)

// Handler serves the JSON-RPC binding of a Dispatcher on POST /.
type Handler struct {
	tc httpx.TransportConfig
	d  *Dispatcher
}

// New returns the JSON-RPC binding of d with the transport settings tc
// (defaults applied).
func New(d *Dispatcher, tc httpx.TransportConfig) *Handler {
	return &Handler{tc: tc.WithDefaults(), d: d}
}

var nullID = rpc.NullID()

// toRPCError renders an error as a JSON-RPC error member whose data holds
// its ErrorInfo (and BadRequest) details.
func toRPCError(err error) *rpc.Error {
	ae := a2a.AsError(err)
	e := &rpc.Error{Code: ae.Code, Message: ae.Message}
	if d := ae.Details(); len(d) > 0 {
		if b, merr := json.Marshal(d); merr == nil {
			e.Data = b
		}
	}
	return e
}

// parseCall validates the envelope of one request (rpc.ParseCall),
// with its failure as an A2A error.
func parseCall(raw json.RawMessage) (rpc.Call, *a2a.Error) {
	call, perr := rpc.ParseCall(raw)
	if perr != nil {
		return call, a2a.NewError(perr.Code, "%s", perr.Message)
	}
	return call, nil
}

// rpcResult encodes a result member; a value that cannot be encoded is
// an internal error.
func rpcResult(id json.RawMessage, res any) rpc.Response {
	b, err := a2a.MarshalJSONValue(res)
	if err != nil {
		return rpc.Response{ID: id, Error: toRPCError(a2a.ErrInternal())}
	}
	return rpc.Response{ID: id, Result: b}
}

// Serve answers a JSON-RPC POST for the authenticated principal ("" when
// auth is off) (RPC-1, RPC-1a, RPC-2, RPC-3, RPC-4): a JSON response, or
// an SSE stream for the streaming methods. The stream is pumped from a
// small frame: the request's reading and dispatch (answer) have returned
// by then, so an idle stream's goroutine keeps a smaller stack.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) {
	st := h.answer(w, r, principal)
	if st == nil {
		return
	}
	httpx.Pump(r.Context(), h.tc.KeepAlive, w, st.Stream, st.frame)
}

// rpcStream is the stream of a streaming call with the request id its
// events are framed with.
type rpcStream struct {
	agent.Stream
	id json.RawMessage
}

func (s *rpcStream) frame(ev any) []byte { return EventFrame(s.id, ev) }

// answer reads and dispatches the request: it writes the response of a
// unary call (nil), or echoes the activated extensions and returns the
// stream of a streaming one.
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, principal string) *rpcStream {
	c := h.tc.NewCall(r, agent.BindingJSONRPC, principal, "")
	if !httpx.JSONContentType(r.Header.Get("Content-Type")) {
		// RPC-15: refused before the body is read, so the id is null.
		h.write(w, h.d.Refuse(r.Context(), c, nullID, "", httpx.ErrContentType()))
		return nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.tc.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.write(w, h.d.Refuse(r.Context(), c, nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the body exceeds %d bytes", h.tc.MaxBodyBytes)))
			return nil
		}
		h.write(w, h.d.Refuse(r.Context(), c, nullID, "", a2a.NewError(a2a.CodeParseError, "Parse error: the body could not be read")))
		return nil
	}
	out := h.d.Handle(r.Context(), c, body)
	if out.Stream == nil {
		h.write(w, out)
		return nil
	}
	httpx.EchoExtensions(w, out.Extensions)
	return &rpcStream{Stream: out.Stream, id: out.ID}
}

// write sends a unary outcome: its JSON body, or 204 when there is none
// (notifications).
func (h *Handler) write(w http.ResponseWriter, out Outcome) {
	httpx.EchoExtensions(w, out.Extensions)
	if out.Response == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	status := http.StatusOK
	if out.Refusal != nil {
		// AUTH-6: a limits refusal keeps its HTTP meaning (403, 429).
		status = out.Refusal.HTTPStatus()
		httpx.RetryAfter(w, out.Refusal)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(out.Response)
}

func buildResponse(call rpc.Call, res any, err error) rpc.Response {
	if err != nil {
		return rpc.Response{ID: call.ID, Error: toRPCError(err)}
	}
	if res == nil {
		res = struct{}{}
	}
	return rpcResult(call.ID, res)
}

// dispatch runs a non-streaming method; a request that cannot be decoded
// or a method that does not exist is Handler.Invalid.
func dispatch(ctx context.Context, h agent.Handler, c agent.Call, call rpc.Call) (any, error) {
	switch call.Method {
	case a2a.MethodSendMessage:
		return run(ctx, h, c, call, h.SendMessage)
	case a2a.MethodGetTask:
		return run(ctx, h, c, call, h.GetTask)
	case a2a.MethodListTasks:
		return run(ctx, h, c, call, h.ListTasks)
	case a2a.MethodCancelTask:
		return run(ctx, h, c, call, h.CancelTask)
	case a2a.MethodCreatePushConfig:
		return run(ctx, h, c, call, h.CreateTaskPushNotificationConfig)
	case a2a.MethodGetPushConfig:
		return run(ctx, h, c, call, h.GetTaskPushNotificationConfig)
	case a2a.MethodListPushConfigs:
		return run(ctx, h, c, call, h.ListTaskPushNotificationConfigs)
	case a2a.MethodDeletePushConfig:
		return run(ctx, h, c, call, h.DeleteTaskPushNotificationConfig)
	case a2a.MethodGetExtendedAgentCard:
		// The method takes no params but the tenant; other content is
		// ignored, as before tenants were read.
		var req struct {
			Tenant string `json:"tenant"`
		}
		_ = protojson.Decode(call.Params, &req)
		c.Tenant = req.Tenant
		return h.GetExtendedAgentCard(ctx, c)
	}
	return nil, h.Invalid(ctx, c, call.Method, &a2a.Error{Code: a2a.CodeMethodNotFound, Message: "Method not found: " + truncateMethod(call.Method)})
}

// run decodes the params of call into an R and runs op with it.
func run[R, T any](ctx context.Context, h agent.Handler, c agent.Call, call rpc.Call, op func(context.Context, agent.Call, *R) (T, error)) (any, error) {
	req := new(R)
	if err := protojson.Decode(call.Params, req); err != nil {
		return nil, h.Invalid(ctx, c, call.Method, err)
	}
	return op(ctx, c, req)
}

func truncateMethod(m string) string {
	if len(m) > 64 {
		m = m[:64]
	}
	return fmt.Sprintf("%q", m)
}

// openStream starts a streaming method; errors come before any SSE output.
func openStream(ctx context.Context, h agent.Handler, c agent.Call, call rpc.Call) (agent.Stream, error) {
	var res any
	var err error
	if call.Method == a2a.MethodSendStreamingMessage {
		res, err = run(ctx, h, c, call, h.SendStreamingMessage)
	} else {
		res, err = run(ctx, h, c, call, h.SubscribeToTask)
	}
	st, _ := res.(agent.Stream)
	return st, err
}
