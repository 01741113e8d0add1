// Package jsonrpc is the JSON-RPC 2.0 binding of an agent.Service (RPC-1,
// RPC-1a): it decodes a POST body, calls the service and encodes the
// answer, a JSON document or an SSE stream.
package jsonrpc

import (
	"bytes"
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
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Handler serves the JSON-RPC binding of a Service on POST /.
type Handler struct {
	svc *agent.Service
	tc  httpx.TransportConfig
}

// New returns the JSON-RPC binding of svc with the transport settings tc
// (defaults applied).
func New(svc *agent.Service, tc httpx.TransportConfig) *Handler {
	return &Handler{svc: svc, tc: tc.WithDefaults()}
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
func parseCall(raw json.RawMessage) (rpc.Call, *rpc.Error) {
	call, perr := rpc.ParseCall(raw)
	if perr != nil {
		return call, toRPCError(a2a.NewError(perr.Code, "%s", perr.Message))
	}
	return call, nil
}

// rpcResult encodes a result member; a value that cannot be encoded is
// an internal error.
func rpcResult(id json.RawMessage, res any) rpc.Response {
	b, err := json.Marshal(res)
	if err != nil {
		return rpc.Response{ID: id, Error: toRPCError(a2a.ErrInternal())}
	}
	return rpc.Response{ID: id, Result: b}
}

// Serve answers a JSON-RPC POST for the authenticated principal ("" when
// auth is off) (RPC-1, RPC-1a, RPC-2, RPC-3, RPC-4).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) {
	if !httpx.JSONContentType(r.Header.Get("Content-Type")) {
		h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: Content-Type must be application/json")))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.tc.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the body exceeds %d bytes", h.tc.MaxBodyBytes)))
			return
		}
		h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeParseError, "Parse error: the body could not be read")))
		return
	}
	if !json.Valid(body) {
		h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeParseError, "Parse error: the body is not valid JSON")))
		return
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		h.serveBatch(w, r, principal, trimmed)
		return
	}
	call, perr := parseCall(trimmed)
	if perr != nil {
		h.writeRPCError(w, call.ID, call.Method, perr)
		return
	}
	c := h.tc.NewCall(r, principal, "")
	if err := httpx.Precheck(w, h.svc, c); err != nil {
		h.answer(w, call, nil, err)
		return
	}
	ctx := r.Context()
	switch call.Method {
	case a2a.MethodSendStreamingMessage, a2a.MethodSubscribeToTask:
		st, err := h.openStream(ctx, c, call)
		h.svc.RecordRequest(agent.BindingJSONRPC, call.Method, err)
		if call.Notification {
			// Nobody listens: the turn (if one started) runs on; no body.
			if err == nil {
				st.Detach() // nobody was listening to disconnect
			}
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if err != nil {
			writeRPC(w, buildResponse(call, nil, err)) // counted above
			return
		}
		sw := sse.Start(w)
		id := call.ID
		if id == nil {
			id = nullID
		}
		httpx.Pump(ctx, h.svc, h.tc.KeepAlive, sw, st, func(ev any) []byte {
			resp := rpcResult(id, ev)
			resp.JSONRPC = rpc.Version
			b, _ := json.Marshal(resp)
			return b
		})
		return
	}
	res, err := h.dispatch(ctx, c, call)
	h.answer(w, call, res, err)
}

// answer counts a single call and writes its response (nothing for a
// notification).
func (h *Handler) answer(w http.ResponseWriter, call rpc.Call, res any, err error) {
	h.svc.RecordRequest(agent.BindingJSONRPC, call.Method, err)
	if call.Notification {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRPC(w, buildResponse(call, res, err))
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

// serveBatch handles a JSON-RPC batch: each call in turn, streaming
// methods refused, notifications unanswered.
func (h *Handler) serveBatch(w http.ResponseWriter, r *http.Request, principal string, body []byte) {
	var items []json.RawMessage
	if err := json.Unmarshal(body, &items); err != nil || len(items) == 0 {
		h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch must be a non-empty array")))
		return
	}
	if len(items) > 100 {
		h.writeRPCError(w, nullID, "", toRPCError(a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a batch holds at most 100 calls")))
		return
	}
	c := h.tc.NewCall(r, principal, "")
	pre := httpx.Precheck(w, h.svc, c)
	ctx := r.Context()
	var out []rpc.Response
	for _, item := range items {
		call, perr := parseCall(item)
		if perr != nil {
			h.svc.RecordRequestCode(agent.BindingJSONRPC, call.Method, perr.Code)
			out = append(out, rpc.Response{JSONRPC: rpc.Version, ID: call.ID, Error: perr})
			continue
		}
		var res any
		err := pre
		if err == nil {
			switch call.Method {
			case a2a.MethodSendStreamingMessage, a2a.MethodSubscribeToTask:
				err = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: streaming methods cannot be batched")
			default:
				res, err = h.dispatch(ctx, c, call)
			}
		}
		h.svc.RecordRequest(agent.BindingJSONRPC, call.Method, err)
		if call.Notification {
			continue
		}
		resp := buildResponse(call, res, err)
		resp.JSONRPC = rpc.Version
		out = append(out, resp)
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeRPC(w, rpc.Response{ID: nullID, Error: toRPCError(a2a.ErrInternal())})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// dispatch runs a non-streaming method.
func (h *Handler) dispatch(ctx context.Context, c agent.Call, call rpc.Call) (any, error) {
	s := h.svc
	switch call.Method {
	case a2a.MethodSendMessage:
		var req a2a.SendMessageRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.SendMessage(ctx, c, &req)
	case a2a.MethodGetTask:
		var req a2a.GetTaskRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.GetTask(ctx, c, &req)
	case a2a.MethodListTasks:
		var req a2a.ListTasksRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.ListTasks(ctx, c, &req)
	case a2a.MethodCancelTask:
		var req a2a.CancelTaskRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.CancelTask(ctx, c, &req)
	case a2a.MethodCreatePushConfig:
		var req a2a.TaskPushNotificationConfig
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.CreateTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodGetPushConfig:
		var req a2a.GetTaskPushNotificationConfigRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.GetTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodListPushConfigs:
		var req a2a.ListTaskPushNotificationConfigsRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.ListTaskPushNotificationConfigs(ctx, c, &req)
	case a2a.MethodDeletePushConfig:
		var req a2a.DeleteTaskPushNotificationConfigRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return s.DeleteTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodGetExtendedAgentCard:
		// The method takes no params but the tenant; other content is
		// ignored, as before tenants were read.
		var req struct {
			Tenant string `json:"tenant"`
		}
		_ = protojson.Decode(call.Params, &req)
		c.Tenant = req.Tenant
		return s.GetExtendedAgentCard(ctx, c)
	}
	return nil, &a2a.Error{Code: a2a.CodeMethodNotFound, Message: "Method not found: " + truncateMethod(call.Method)}
}

func truncateMethod(m string) string {
	if len(m) > 64 {
		m = m[:64]
	}
	return fmt.Sprintf("%q", m)
}

// openStream starts a streaming method; errors come before any SSE output.
func (h *Handler) openStream(ctx context.Context, c agent.Call, call rpc.Call) (agent.Stream, error) {
	if call.Method == a2a.MethodSendStreamingMessage {
		var req a2a.SendMessageRequest
		if err := protojson.Decode(call.Params, &req); err != nil {
			return nil, err
		}
		return h.svc.SendStreamingMessage(ctx, c, &req)
	}
	var req a2a.SubscribeToTaskRequest
	if err := protojson.Decode(call.Params, &req); err != nil {
		return nil, err
	}
	return h.svc.SubscribeToTask(ctx, c, &req)
}

// writeRPCError counts a request refused before it reached a method (method
// "" when it could not be read) and writes the error.
func (h *Handler) writeRPCError(w http.ResponseWriter, id json.RawMessage, method string, e *rpc.Error) {
	h.svc.RecordRequestCode(agent.BindingJSONRPC, method, e.Code)
	writeRPC(w, rpc.Response{ID: id, Error: e})
}

func writeRPC(w http.ResponseWriter, resp rpc.Response) {
	resp.JSONRPC = rpc.Version
	if resp.ID == nil {
		resp.ID = nullID
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(rpc.Response{JSONRPC: rpc.Version, ID: nullID, Error: toRPCError(a2a.ErrInternal())})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
