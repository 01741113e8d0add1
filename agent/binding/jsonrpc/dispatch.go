package jsonrpc

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// maxBatch bounds the calls of one batch.
const maxBatch = 100

// Dispatcher runs JSON-RPC 2.0 messages against a Service whatever carries
// them: the HTTP binding, WebSocket, stdio and Redis Streams (XPORT-3…5)
// all hand it one message and write what it returns, so every carrier has
// the same methods, errors, version rules and metrics.
type Dispatcher struct {
	svc     *agent.Service
	binding string
	tenants Tenants // nil: every message is served by svc
}

// NewDispatcher returns a dispatcher over svc whose requests are counted
// under the metrics label binding (agent.BindingJSONRPC, …).
func NewDispatcher(svc *agent.Service, binding string) *Dispatcher {
	return &Dispatcher{svc: svc, binding: binding}
}

// Service returns the service behind the dispatcher.
func (d *Dispatcher) Service() *agent.Service { return d.svc }

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
	trimmed := bytes.TrimSpace(msg)
	if !json.Valid(trimmed) {
		return d.Refuse(nullID, "", a2a.NewError(a2a.CodeParseError, "Parse error: the message is not valid JSON"))
	}
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return d.handleBatch(ctx, c, trimmed)
	}
	call, perr := parseCall(trimmed)
	if perr != nil {
		d.svc.RecordRequestCode(d.binding, call.Method, perr.Code)
		return Outcome{Response: encode(rpc.Response{ID: call.ID, Error: perr}), ID: call.ID, Method: call.Method}
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
	c, call, legacy, lerr := d.legacy(c, call)
	if lerr != nil {
		return d.answer(out, call, nil, lerr)
	}
	active, err := d.svc.Negotiate(c)
	if err != nil {
		return d.answer(out, call, nil, err)
	}
	out.Extensions = active
	if isStreaming(call.Method) {
		st, err := openStream(ctx, d.svc, c, call)
		d.svc.RecordRequest(d.binding, call.Method, err)
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
		if legacy {
			st = legacyStream{st}
		}
		out.Stream = st
		return out
	}
	res, err := dispatch(ctx, d.svc, c, call)
	if legacy && err == nil {
		res = v03.Result03(call.Method, res)
	}
	return d.answer(out, call, res, err)
}

// Refuse counts a message refused before it reached a method (method ""
// when it could not be read) and returns its error response; carriers use
// it for their own refusals (size, content type) so they are counted and
// shaped like the dispatcher's.
func (d *Dispatcher) Refuse(id json.RawMessage, method string, err error) Outcome {
	e := toRPCError(err)
	d.svc.RecordRequestCode(d.binding, method, e.Code)
	if id == nil {
		id = nullID
	}
	return Outcome{Response: encode(rpc.Response{ID: id, Error: e}), ID: id, Method: method}
}

// answer counts a single call and fills in its response (none for a
// notification).
func (d *Dispatcher) answer(out Outcome, call rpc.Call, res any, err error) Outcome {
	d.svc.RecordRequest(d.binding, call.Method, err)
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
		return d.Refuse(nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch must be a non-empty array"))
	}
	if len(items) > maxBatch {
		return d.Refuse(nullID, "", a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch holds at most %d calls", maxBatch))
	}
	active, pre := d.svc.Negotiate(c)
	out := Outcome{ID: nullID, Extensions: active}
	var resps []rpc.Response
	for _, item := range items {
		call, perr := parseCall(item)
		if perr != nil {
			d.svc.RecordRequestCode(d.binding, call.Method, perr.Code)
			resps = append(resps, rpc.Response{JSONRPC: rpc.Version, ID: call.ID, Error: perr})
			continue
		}
		var res any
		err := pre
		td, tc := d.forTenant(c, call) // TURN-10: each call to its agent
		ic, call, legacy, lerr := td.legacy(tc, call)
		if legacy || td != d {
			_, err = td.svc.Negotiate(ic)
			if err == nil {
				err = lerr
			}
		}
		if err == nil {
			if isStreaming(call.Method) {
				err = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: streaming methods cannot be batched")
			} else {
				res, err = dispatch(ctx, td.svc, ic, call)
			}
		}
		if legacy && err == nil {
			res = v03.Result03(call.Method, res)
		}
		d.svc.RecordRequest(d.binding, call.Method, err)
		if call.Notification {
			continue
		}
		resp := buildResponse(call, res, err)
		resp.JSONRPC = rpc.Version
		resps = append(resps, resp)
	}
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
