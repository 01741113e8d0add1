package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// maxBatch bounds the calls of one batch.
const maxBatch = 100

// Dispatcher runs JSON-RPC 2.0 messages against an agent.Handler whatever
// carries them: the HTTP binding, WebSocket, stdio and Redis Streams
// (XPORT-3…5) all hand it one message and write what it returns, so every
// carrier has the same methods, errors, version rules and metrics (the
// carrier names itself in Call.Binding). One Dispatcher serves every
// carrier of a site.
type Dispatcher struct {
	h       agent.Handler
	tenants Tenants // nil: every message is served by h
	compat  Compat  // nil: A2A 1.0 method names only
	compatH agent.Handler
}

// NewDispatcher returns a dispatcher over h.
func NewDispatcher(h agent.Handler) *Dispatcher {
	return &Dispatcher{h: h}
}

// Handler returns the handler behind the dispatcher.
func (d *Dispatcher) Handler() agent.Handler { return d.h }

// Outcome is what one message produced. At most one of Response and
// Stream is set; neither is for a notification.
type Outcome struct {
	// Response is the encoded answer: a response object, or an array of
	// them for a batch.
	Response []byte
	// Stream is the event stream of a streaming method; each event is sent
	// as EventFrame(ID, ev). The carrier must Close it (or Detach it when
	// nobody listens).
	Stream agent.Stream
	// ID is the id of the request (null when it could not be read).
	ID json.RawMessage
	// Method is the method called ("" when it could not be read).
	Method string
	// Extensions are the extensions activated for the call (RPC-3), for
	// carriers that can echo them.
	Extensions []string
	// Refusal is set when a single call was refused by the caller's limits
	// (AUTH-6: PERMISSION_DENIED, RESOURCE_EXHAUSTED); HTTP carriers answer
	// with its HTTP status (403, 429) and Retry-After instead of 200.
	Refusal *a2a.Error
}

// Handle runs one JSON-RPC message (a request object or a batch) for the
// call c: the version and extension rules (RPC-2, RPC-3), the method and
// its result or error. msg must already be size-limited by the carrier.
func (d *Dispatcher) Handle(ctx context.Context, c agent.Call, msg []byte) Outcome {
	if c.Info == nil {
		c.Info = new(agent.RequestInfo) // receives the activated extensions
	}
	trimmed := bytes.TrimSpace(msg)
	if !json.Valid(trimmed) {
		return d.Refuse(ctx, c, nullID, "", a2a.NewError(a2a.CodeParseError, "Parse error: the message is not valid JSON"))
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return d.handleBatch(ctx, c, trimmed)
	}
	call, perr := parseCall(trimmed)
	if perr != nil {
		_ = d.h.Refuse(ctx, c, call.Method, perr)
		return Outcome{Response: encode(rpc.Response{ID: call.ID, Error: toRPCError(perr)}), ID: call.ID, Method: call.Method}
	}
	if t, tc := d.forTenant(c, call); t != d {
		return t.handleOne(ctx, tc, call) // TURN-10: another agent of the site
	}
	return d.handleOne(ctx, c, call)
}

// handleOne runs one parsed call (not a batch) for c.
func (d *Dispatcher) handleOne(ctx context.Context, c agent.Call, call rpc.Call) Outcome {
	out := Outcome{ID: call.ID, Method: call.Method}
	if out.ID == nil {
		out.ID = nullID
	}
	h, c, call, compat, terr := d.translate(c, call)
	if terr != nil {
		err := h.Invalid(ctx, c, call.Method, terr)
		out.Extensions = c.Info.Extensions()
		return answer(out, call, nil, err)
	}
	if isStreaming(call.Method) {
		st, err := openStream(ctx, h, c, call)
		out.Extensions = c.Info.Extensions()
		if call.Notification {
			// Nobody listens: the turn (if one started) runs on.
			if err == nil {
				st.Detach()
			}
			return out
		}
		if err != nil {
			out.Response = encode(buildResponse(call, nil, err))
			out.Refusal = limitRefusal(err)
			return out
		}
		if compat {
			st = d.compat.Stream(st)
		}
		out.Stream = st
		return out
	}
	res, err := dispatch(ctx, h, c, call)
	if compat && err == nil {
		res = d.compat.Result(call.Method, res)
	}
	out.Extensions = c.Info.Extensions()
	return answer(out, call, res, err)
}

// Refuse answers a message the carrier refused itself (size, content type,
// credentials; method "" when it could not be read): counted through the
// handler (Handler.Refuse) and shaped like the dispatcher's own answers.
func (d *Dispatcher) Refuse(ctx context.Context, c agent.Call, id json.RawMessage, method string, err error) Outcome {
	e := toRPCError(d.h.Refuse(ctx, c, method, err))
	if id == nil {
		id = nullID
	}
	return Outcome{Response: encode(rpc.Response{ID: id, Error: e}), ID: id, Method: method}
}

// answer fills in the response of a single call (none for a
// notification).
func answer(out Outcome, call rpc.Call, res any, err error) Outcome {
	switch {
	case call.Notification:
	case err == nil:
		if res == nil {
			res = struct{}{}
		}
		out.Response = resultFrame(call.ID, res)
	default:
		out.Response = encode(buildResponse(call, res, err))
		out.Refusal = limitRefusal(err)
	}
	return out
}

// limitRefusal returns err when it is a refusal of the caller's limits
// (AUTH-6), else nil.
func limitRefusal(err error) *a2a.Error {
	if err == nil {
		return nil
	}
	ae := a2a.AsError(err)
	if ae.Code == a2a.CodePermissionDenied || ae.Code == a2a.CodeResourceExhausted {
		return ae
	}
	return nil
}

// handleBatch runs each call of a batch in turn: streaming methods are
// refused, notifications unanswered (RPC-1a).
func (d *Dispatcher) handleBatch(ctx context.Context, c agent.Call, body []byte) Outcome {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil || len(items) == 0 {
		return d.Refuse(ctx, c, nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch must be a non-empty array"))
	}
	if len(items) > maxBatch {
		return d.Refuse(ctx, c, nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch holds at most %d calls", maxBatch))
	}
	out := Outcome{ID: nullID}
	var resps []rpc.Response
	for _, item := range items {
		call, perr := parseCall(item)
		if perr != nil {
			_ = d.h.Refuse(ctx, c, call.Method, perr)
			resps = append(resps, rpc.Response{JSONRPC: rpc.Version, ID: call.ID, Error: toRPCError(perr)})
			continue
		}
		td, tc := d.forTenant(c, call) // TURN-10: each call to its agent
		res, err := td.batchItem(ctx, tc, call)
		if call.Notification {
			continue
		}
		resp := buildResponse(call, res, err)
		resp.JSONRPC = rpc.Version
		resps = append(resps, resp)
	}
	out.Extensions = c.Info.Extensions()
	if len(resps) == 0 {
		return out
	}
	b, err := json.Marshal(resps)
	if err != nil {
		b = encode(rpc.Response{ID: nullID, Error: toRPCError(a2a.ErrInternal())})
	}
	out.Response = b
	return out
}

// batchItem runs one call of a batch; streaming methods are refused.
func (d *Dispatcher) batchItem(ctx context.Context, c agent.Call, call rpc.Call) (any, error) {
	h, c, call, compat, terr := d.translate(c, call)
	if terr != nil {
		return nil, h.Invalid(ctx, c, call.Method, terr)
	}
	if isStreaming(call.Method) {
		return nil, h.Invalid(ctx, c, call.Method, a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: streaming methods cannot be batched"))
	}
	res, err := dispatch(ctx, h, c, call)
	if compat && err == nil {
		res = d.compat.Result(call.Method, res)
	}
	return res, err
}

// isStreaming reports whether a method answers with an event stream.
func isStreaming(method string) bool {
	return method == a2a.MethodSendStreamingMessage || method == a2a.MethodSubscribeToTask
}

// encode renders a response object with its version member and a null id
// when none is known.
func encode(resp rpc.Response) []byte {
	resp.JSONRPC = rpc.Version
	if resp.ID == nil {
		resp.ID = nullID
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(rpc.Response{JSONRPC: rpc.Version, ID: nullID, Error: toRPCError(a2a.ErrInternal())})
	}
	return b
}
