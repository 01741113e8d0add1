// Package rest is the HTTP+JSON binding of an agent.Handler (RPC-13): it
// maps a route to an operation, decodes the path, query and body, calls
// the handler and encodes the answer, a JSON document or an SSE stream.
package rest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/internal/protojson"
)

// Handler serves the HTTP+JSON routes of an agent.Handler.
type Handler struct {
	h  agent.Handler
	tc httpx.TransportConfig
}

// New returns the HTTP+JSON binding of h with the transport settings tc
// (defaults applied).
func New(h agent.Handler, tc httpx.TransportConfig) *Handler {
	return &Handler{h: h, tc: tc.WithDefaults()}
}

// restRoute is a parsed HTTP+JSON path: the operation and its path values.
type restRoute struct {
	op             string // a2a method name
	taskID, cfgID  string
	methodsAllowed []string
}

// parseRESTPath maps a path (after the optional tenant segment) to an
// operation; ok is false for paths that are not A2A routes.
func parseRESTPath(path string) (restRoute, string, bool) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	tenant := ""
	if len(segs) > 1 && !isRESTRoot(segs[0]) {
		tenant, segs = segs[0], segs[1:]
	}
	if len(segs) == 0 {
		return restRoute{}, "", false
	}
	switch {
	case len(segs) == 1 && segs[0] == "message:send":
		return restRoute{op: a2a.MethodSendMessage, methodsAllowed: []string{http.MethodPost}}, tenant, true
	case len(segs) == 1 && segs[0] == "message:stream":
		return restRoute{op: a2a.MethodSendStreamingMessage, methodsAllowed: []string{http.MethodPost}}, tenant, true
	case len(segs) == 1 && segs[0] == "extendedAgentCard":
		return restRoute{op: a2a.MethodGetExtendedAgentCard, methodsAllowed: []string{http.MethodGet}}, tenant, true
	case len(segs) == 1 && segs[0] == "tasks":
		return restRoute{op: a2a.MethodListTasks, methodsAllowed: []string{http.MethodGet}}, tenant, true
	case len(segs) == 2 && segs[0] == "tasks":
		id, action, _ := strings.Cut(segs[1], ":")
		switch action {
		case "":
			return restRoute{op: a2a.MethodGetTask, taskID: id, methodsAllowed: []string{http.MethodGet}}, tenant, true
		case "cancel":
			return restRoute{op: a2a.MethodCancelTask, taskID: id, methodsAllowed: []string{http.MethodPost}}, tenant, true
		case "subscribe":
			return restRoute{op: a2a.MethodSubscribeToTask, taskID: id, methodsAllowed: []string{http.MethodGet, http.MethodPost}}, tenant, true
		}
	case len(segs) == 3 && segs[0] == "tasks" && segs[2] == "pushNotificationConfigs":
		return restRoute{op: "pushConfigs", taskID: segs[1], methodsAllowed: []string{http.MethodGet, http.MethodPost}}, tenant, true
	case len(segs) == 4 && segs[0] == "tasks" && segs[2] == "pushNotificationConfigs":
		return restRoute{op: "pushConfig", taskID: segs[1], cfgID: segs[3], methodsAllowed: []string{http.MethodGet, http.MethodDelete}}, tenant, true
	}
	return restRoute{}, "", false
}

func isRESTRoot(seg string) bool {
	return seg == "tasks" || seg == "extendedAgentCard" || strings.HasPrefix(seg, "message:")
}

// Serve answers r when its path is an HTTP+JSON route (RPC-13) and
// reports whether it did; principal is the authenticated caller ("" when
// auth is off).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) bool {
	route, tenant, ok := parseRESTPath(r.URL.Path)
	if !ok {
		return false
	}
	call := h.tc.NewCall(r, agent.BindingREST, principal, tenant)
	if !h.methodAllowed(w, r, call, route) {
		return true
	}
	res, st, err := h.operate(w, r, call, route)
	httpx.EchoExtensions(w, call.Info.Extensions())
	if st != nil {
		h.pumpREST(r.Context(), w, st)
		return true
	}
	if route.op == a2a.MethodGetExtendedAgentCard {
		h.writeExtendedCard(w, r, res, err)
		return true
	}
	writeRESTResult(w, res, err)
	return true
}

// refuse answers a route whose request could not be decoded: through the
// handler, so the version rules come first and the call is counted.
func (h *Handler) refuse(r *http.Request, call agent.Call, route restRoute, err error) error {
	return h.h.Invalid(r.Context(), call, restMethod(route.op, r.Method), err)
}

// methodAllowed reports whether r's HTTP method is one the route serves;
// when it is not, it answers 405 with an Allow header and counts the
// request as method "unknown".
func (h *Handler) methodAllowed(w http.ResponseWriter, r *http.Request, call agent.Call, route restRoute) bool {
	for _, m := range route.methodsAllowed {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(route.methodsAllowed, ", "))
	e := &a2a.Error{Code: a2a.CodeMethodNotFound, Message: "Method " + r.Method + " is not allowed on this route"}
	_ = h.h.Refuse(r.Context(), call, "", e) // counted as method "unknown"
	writeRESTError(w, e, http.StatusMethodNotAllowed)
	return false
}

// operate calls the service for route: it returns a JSON result, or a
// stream to pump as SSE (only when err is nil).
func (h *Handler) operate(w http.ResponseWriter, r *http.Request, call agent.Call, route restRoute) (any, agent.Stream, error) {
	switch route.op {
	case a2a.MethodSendMessage, a2a.MethodSendStreamingMessage:
		return h.send(w, r, call, route)
	case a2a.MethodGetTask, a2a.MethodListTasks, a2a.MethodCancelTask, a2a.MethodSubscribeToTask:
		return h.task(w, r, call, route)
	case a2a.MethodGetExtendedAgentCard:
		res, err := h.h.GetExtendedAgentCard(r.Context(), call)
		return res, nil, err
	case "pushConfigs", "pushConfig":
		res, err := h.pushConfig(w, r, call, route)
		return res, nil, err
	}
	return nil, nil, h.refuse(r, call, route, agent.ErrPushNotSupported())
}

// send answers message:send and message:stream.
func (h *Handler) send(w http.ResponseWriter, r *http.Request, call agent.Call, route restRoute) (any, agent.Stream, error) {
	var req a2a.SendMessageRequest
	if err := h.decodeBody(w, r, &req, false); err != nil {
		return nil, nil, h.refuse(r, call, route, err)
	}
	if route.op == a2a.MethodSendMessage {
		res, err := h.h.SendMessage(r.Context(), call, &req)
		return res, nil, err
	}
	st, err := h.h.SendStreamingMessage(r.Context(), call, &req)
	if err != nil {
		return nil, nil, err
	}
	return nil, st, nil
}

// task answers the task routes: get, list, cancel and subscribe.
func (h *Handler) task(w http.ResponseWriter, r *http.Request, call agent.Call, route restRoute) (any, agent.Stream, error) {
	ctx, s := r.Context(), h.h
	switch route.op {
	case a2a.MethodGetTask:
		req := a2a.GetTaskRequest{ID: route.taskID}
		q, err := protojson.NormalizeQuery(r.URL.Query(), reflect.TypeOf(req))
		if err == nil {
			req.HistoryLength, err = queryInt32(q, "historyLength")
		}
		if err != nil {
			return nil, nil, h.refuse(r, call, route, err)
		}
		res, err := s.GetTask(ctx, call, &req)
		return res, nil, err
	case a2a.MethodListTasks:
		req, err := listRequestFromQuery(r.URL.Query())
		if err != nil {
			return nil, nil, h.refuse(r, call, route, err)
		}
		res, err := s.ListTasks(ctx, call, req)
		return res, nil, err
	case a2a.MethodCancelTask:
		var req a2a.CancelTaskRequest
		if err := h.decodeBody(w, r, &req, true); err != nil {
			return nil, nil, h.refuse(r, call, route, err)
		}
		req.ID = route.taskID
		res, err := s.CancelTask(ctx, call, &req)
		return res, nil, err
	}
	st, err := s.SubscribeToTask(ctx, call, &a2a.SubscribeToTaskRequest{ID: route.taskID})
	if err != nil {
		return nil, nil, err
	}
	return nil, st, nil
}

// pushConfig answers the push notification config routes: create and
// list on the collection, get and delete on one config.
func (h *Handler) pushConfig(w http.ResponseWriter, r *http.Request, call agent.Call, route restRoute) (any, error) {
	ctx, s := r.Context(), h.h
	switch {
	case route.op == "pushConfigs" && r.Method == http.MethodPost:
		var req a2a.TaskPushNotificationConfig
		if err := h.decodeBody(w, r, &req, false); err != nil {
			return nil, h.refuse(r, call, route, err)
		}
		req.TaskID = route.taskID
		return s.CreateTaskPushNotificationConfig(ctx, call, &req)
	case route.op == "pushConfigs":
		req := a2a.ListTaskPushNotificationConfigsRequest{TaskID: route.taskID}
		q, err := protojson.NormalizeQuery(r.URL.Query(), reflect.TypeOf(req))
		var ps *int32
		if err == nil {
			ps, err = queryInt32(q, "pageSize")
		}
		if err != nil {
			return nil, h.refuse(r, call, route, err)
		}
		req.PageToken = q.Get("pageToken")
		if ps != nil {
			req.PageSize = *ps
		}
		return s.ListTaskPushNotificationConfigs(ctx, call, &req)
	}
	req := a2a.GetTaskPushNotificationConfigRequest{TaskID: route.taskID, ID: route.cfgID}
	if r.Method == http.MethodDelete {
		return s.DeleteTaskPushNotificationConfig(ctx, call, &req)
	}
	return s.GetTaskPushNotificationConfig(ctx, call, &req)
}

// writeRESTResult writes the answer of an operation: its error as a
// google.rpc.Status body, or res as a JSON document (RPC-15).
func writeRESTResult(w http.ResponseWriter, res any, err error) {
	if err != nil {
		writeRESTError(w, a2a.AsError(err), 0)
		return
	}
	b, merr := a2a.MarshalJSONValue(res)
	if merr != nil {
		writeRESTError(w, a2a.ErrInternal(), 0)
		return
	}
	w.Header().Set("Content-Type", "application/json") // A2A 1.0 §11.1 (RPC-15)
	_, _ = w.Write(b)
}

// restMethod names the A2A method of a route answered for the HTTP method
// verb (the push config routes serve two methods each).
func restMethod(op, verb string) string {
	switch op {
	case "pushConfigs":
		if verb == http.MethodPost {
			return a2a.MethodCreatePushConfig
		}
		return a2a.MethodListPushConfigs
	case "pushConfig":
		if verb == http.MethodDelete {
			return a2a.MethodDeletePushConfig
		}
		return a2a.MethodGetPushConfig
	}
	return op
}

// decodeBody reads a JSON request body into v; an empty body is allowed
// when optional.
func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, v any, optional bool) error {
	if !httpx.JSONContentType(r.Header.Get("Content-Type")) {
		return httpx.ErrContentType() // RPC-15: 415, before the body is read
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.tc.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return a2a.NewError(a2a.CodeInvalidRequest, "The body exceeds %d bytes", h.tc.MaxBodyBytes)
		}
		return a2a.NewError(a2a.CodeParseError, "The body could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 && optional {
		return nil
	}
	if !json.Valid(body) {
		return a2a.NewError(a2a.CodeParseError, "The body is not valid JSON")
	}
	return protojson.Decode(body, v)
}

// pumpREST streams events as SSE whose data lines are bare StreamResponses.
func (h *Handler) pumpREST(ctx context.Context, w http.ResponseWriter, st agent.Stream) {
	httpx.Pump(ctx, h.tc.KeepAlive, w, st, func(ev any) []byte {
		b, err := a2a.MarshalJSONValue(ev)
		if err != nil {
			b, _ = json.Marshal(restErrorBody(a2a.ErrInternal(), 0))
		}
		return b
	})
}

type restStatus struct {
	Code    int              `json:"code"`
	Status  string           `json:"status"`
	Message string           `json:"message"`
	Details []map[string]any `json:"details,omitempty"`
}

func restErrorBody(e *a2a.Error, status int) map[string]restStatus {
	if status == 0 {
		status = e.HTTPStatus()
	}
	return map[string]restStatus{"error": {Code: status, Status: e.GRPCStatus(), Message: e.Message, Details: e.Details()}}
}

// writeRESTError writes a google.rpc.Status error body (status 0 = the
// error's own HTTP status).
func writeRESTError(w http.ResponseWriter, e *a2a.Error, status int) {
	if status == 0 {
		status = e.HTTPStatus()
	}
	b, _ := json.Marshal(restErrorBody(e, status))
	httpx.RetryAfter(w, e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func queryInt32(q url.Values, name string) (*int32, error) {
	v := q.Get(name)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return nil, a2a.ErrInvalidParams(name, "must be an integer")
	}
	i := int32(n)
	return &i, nil
}

// listRequestFromQuery reads ListTasks parameters from a query string
// (JSON or proto field names, RPC-14).
func listRequestFromQuery(q url.Values) (*a2a.ListTasksRequest, error) {
	q, err := protojson.NormalizeQuery(q, reflect.TypeFor[a2a.ListTasksRequest]())
	if err != nil {
		return nil, err
	}
	req := &a2a.ListTasksRequest{ContextID: q.Get("contextId"), PageToken: q.Get("pageToken"), StatusTimestampAfter: q.Get("statusTimestampAfter")}
	if v := q.Get("status"); v != "" {
		if req.Status, err = queryTaskState(v); err != nil {
			return nil, err
		}
	}
	if req.PageSize, err = queryInt32(q, "pageSize"); err != nil {
		return nil, err
	}
	if req.HistoryLength, err = queryInt32(q, "historyLength"); err != nil {
		return nil, err
	}
	if v := q.Get("includeArtifacts"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, a2a.ErrInvalidParams("includeArtifacts", "must be true or false")
		}
		req.IncludeArtifacts = &b
	}
	return req, nil
}
