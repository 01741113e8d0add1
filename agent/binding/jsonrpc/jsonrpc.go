package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

var nullID = jsonrpc.NullID()

// toRPCError renders an error as a JSON-RPC error member whose data holds
// its ErrorInfo (and BadRequest) details.
func toRPCError(err error) *jsonrpc.Error {
	ae := asA2AError(err)
	e := &jsonrpc.Error{Code: ae.Code, Message: ae.Message}
	if d := ae.Details(); len(d) > 0 {
		if b, merr := json.Marshal(d); merr == nil {
			e.Data = b
		}
	}
	return e
}

// parseCall validates the envelope of one request (jsonrpc.ParseCall),
// with its failure as an A2A error.
func parseCall(raw json.RawMessage) (jsonrpc.Call, *jsonrpc.Error) {
	call, perr := jsonrpc.ParseCall(raw)
	if perr != nil {
		return call, toRPCError(a2a.NewError(perr.Code, "%s", perr.Message))
	}
	return call, nil
}

// rpcResult encodes a result member; a value that cannot be encoded is
// an internal error.
func rpcResult(id json.RawMessage, res any) jsonrpc.Response {
	b, err := json.Marshal(res)
	if err != nil {
		return jsonrpc.Response{ID: id, Error: toRPCError(a2a.ErrInternal())}
	}
	return jsonrpc.Response{ID: id, Result: b}
}

// serveJSONRPC answers a JSON-RPC POST (RPC-1, RPC-1a, RPC-2, RPC-3, RPC-4).
func (h *Handler) serveJSONRPC(w http.ResponseWriter, r *http.Request, principal string) {
	if !jsonContentType(r.Header.Get("Content-Type")) {
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
	c := h.newCall(r, principal, "")
	if err := h.precheck(w, c); err != nil {
		h.answer(w, call, nil, err)
		return
	}
	ctx := r.Context()
	switch call.Method {
	case a2a.MethodSendStreamingMessage, a2a.MethodSubscribeToTask:
		st, err := h.openStream(ctx, c, call)
		h.svc.RecordRequest(BindingJSONRPC, call.Method, err)
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
		h.pump(ctx, sw, st, func(ev any) []byte {
			resp := rpcResult(id, ev)
			resp.JSONRPC = jsonrpc.Version
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
func (h *Handler) answer(w http.ResponseWriter, call jsonrpc.Call, res any, err error) {
	h.svc.RecordRequest(BindingJSONRPC, call.Method, err)
	if call.Notification {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRPC(w, buildResponse(call, res, err))
}

func buildResponse(call jsonrpc.Call, res any, err error) jsonrpc.Response {
	if err != nil {
		return jsonrpc.Response{ID: call.ID, Error: toRPCError(err)}
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
	c := h.newCall(r, principal, "")
	pre := h.precheck(w, c)
	ctx := r.Context()
	var out []jsonrpc.Response
	for _, item := range items {
		call, perr := parseCall(item)
		if perr != nil {
			h.svc.RecordRequestCode(BindingJSONRPC, call.Method, perr.Code)
			out = append(out, jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: call.ID, Error: perr})
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
		h.svc.RecordRequest(BindingJSONRPC, call.Method, err)
		if call.Notification {
			continue
		}
		resp := buildResponse(call, res, err)
		resp.JSONRPC = jsonrpc.Version
		out = append(out, resp)
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		writeRPC(w, jsonrpc.Response{ID: nullID, Error: toRPCError(a2a.ErrInternal())})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// decodeParams decodes a call's params (or an HTTP+JSON body) into v,
// naming the offending field. Keys are first normalised by the ProtoJSON
// input rule (RPC-14, normalizeProtoJSON): proto field names are accepted
// besides the JSON names.
func decodeParams(raw json.RawMessage, v any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return a2a.ErrInvalidParams("params", "must be an object")
	}
	raw, err := normalizeProtoJSON(raw, reflect.TypeOf(v))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			field := te.Field
			if field == "" {
				field = "params"
			}
			if te.Value == "unknown enum value" {
				return a2a.ErrInvalidParams(field, "is not a known enum value")
			}
			return a2a.ErrInvalidParams(field, fmt.Sprintf("must be of JSON type %s", jsonKind(te.Type.Kind().String())))
		}
		return a2a.ErrInvalidParams("params", sanitizeDecodeError(err))
	}
	return nil
}

func jsonKind(k string) string {
	switch k {
	case "struct", "map":
		return "object"
	case "slice", "array":
		return "array"
	case "int", "int32", "int64", "uint", "uint32", "uint64", "float64", "float32":
		return "number"
	case "bool":
		return "boolean"
	case "ptr":
		return "object"
	}
	return k
}

// sanitizeDecodeError returns a decode error's text, cut to 200 bytes: it
// names JSON syntax and types, never request content beyond that.
func sanitizeDecodeError(err error) string {
	msg := err.Error()
	if len(msg) > 200 {
		msg = msg[:200]
	}
	return msg
}

// dispatch runs a non-streaming method.
func (h *Handler) dispatch(ctx context.Context, c Call, call jsonrpc.Call) (any, error) {
	s := h.svc
	switch call.Method {
	case a2a.MethodSendMessage:
		var req a2a.SendMessageRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.SendMessage(ctx, c, &req)
	case a2a.MethodGetTask:
		var req a2a.GetTaskRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.GetTask(ctx, c, &req)
	case a2a.MethodListTasks:
		var req a2a.ListTasksRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.ListTasks(ctx, c, &req)
	case a2a.MethodCancelTask:
		var req a2a.CancelTaskRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.CancelTask(ctx, c, &req)
	case a2a.MethodCreatePushConfig:
		var req a2a.TaskPushNotificationConfig
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.CreateTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodGetPushConfig:
		var req a2a.GetTaskPushNotificationConfigRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.GetTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodListPushConfigs:
		var req a2a.ListTaskPushNotificationConfigsRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.ListTaskPushNotificationConfigs(ctx, c, &req)
	case a2a.MethodDeletePushConfig:
		var req a2a.DeleteTaskPushNotificationConfigRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return s.DeleteTaskPushNotificationConfig(ctx, c, &req)
	case a2a.MethodGetExtendedAgentCard:
		// The method takes no params but the tenant; other content is
		// ignored, as before tenants were read.
		var req struct {
			Tenant string `json:"tenant"`
		}
		_ = decodeParams(call.Params, &req)
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
func (h *Handler) openStream(ctx context.Context, c Call, call jsonrpc.Call) (Stream, error) {
	if call.Method == a2a.MethodSendStreamingMessage {
		var req a2a.SendMessageRequest
		if err := decodeParams(call.Params, &req); err != nil {
			return nil, err
		}
		return h.svc.SendStreamingMessage(ctx, c, &req)
	}
	var req a2a.SubscribeToTaskRequest
	if err := decodeParams(call.Params, &req); err != nil {
		return nil, err
	}
	return h.svc.SubscribeToTask(ctx, c, &req)
}

// writeRPCError counts a request refused before it reached a method (method
// "" when it could not be read) and writes the error.
func (h *Handler) writeRPCError(w http.ResponseWriter, id json.RawMessage, method string, e *jsonrpc.Error) {
	h.svc.RecordRequestCode(BindingJSONRPC, method, e.Code)
	writeRPC(w, jsonrpc.Response{ID: id, Error: e})
}

func writeRPC(w http.ResponseWriter, resp jsonrpc.Response) {
	resp.JSONRPC = jsonrpc.Version
	if resp.ID == nil {
		resp.ID = nullID
	}
	b, err := json.Marshal(resp)
	if err != nil {
		b, _ = json.Marshal(jsonrpc.Response{JSONRPC: jsonrpc.Version, ID: nullID, Error: toRPCError(a2a.ErrInternal())})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
