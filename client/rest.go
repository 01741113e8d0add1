package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// restTransport is the HTTP+JSON binding: each method is a verb on a
// resource path under the interface URL (and its tenant).
type restTransport struct {
	in a2a.AgentInterface
	h  httpCaller
}

// restCall is one HTTP+JSON request: verb, path, query and body.
type restCall struct {
	verb, path string
	q          url.Values
	body       any
}

// restRoute renders a method and its JSON-RPC params as an HTTP+JSON
// request.
func restRoute(method string, params any) (restCall, error) {
	esc := url.PathEscape
	switch p := params.(type) {
	case *a2a.SendMessageRequest:
		if method == a2a.MethodSendStreamingMessage {
			return restCall{verb: http.MethodPost, path: "/message:stream", body: p}, nil
		}
		return restCall{verb: http.MethodPost, path: "/message:send", body: p}, nil
	case a2a.SubscribeToTaskRequest:
		return restCall{verb: http.MethodPost, path: "/tasks/" + esc(p.ID) + ":subscribe", body: struct{}{}}, nil
	case a2a.GetTaskRequest:
		q := url.Values{}
		if p.HistoryLength != nil {
			q.Set("historyLength", strconv.Itoa(int(*p.HistoryLength)))
		}
		return restCall{verb: http.MethodGet, path: "/tasks/" + esc(p.ID), q: q}, nil
	case *a2a.ListTasksRequest:
		return restCall{verb: http.MethodGet, path: "/tasks", q: listTasksQuery(p)}, nil
	case a2a.CancelTaskRequest:
		return restCall{verb: http.MethodPost, path: "/tasks/" + esc(p.ID) + ":cancel", body: struct{}{}}, nil
	case *a2a.TaskPushNotificationConfig:
		body := *p
		body.Tenant = ""
		return restCall{verb: http.MethodPost, path: "/tasks/" + esc(p.TaskID) + "/pushNotificationConfigs", body: body}, nil
	case a2a.GetTaskPushNotificationConfigRequest:
		verb := http.MethodGet
		if method == a2a.MethodDeletePushConfig {
			verb = http.MethodDelete
		}
		return restCall{verb: verb, path: "/tasks/" + esc(p.TaskID) + "/pushNotificationConfigs/" + esc(p.ID)}, nil
	case a2a.ListTaskPushNotificationConfigsRequest:
		q := url.Values{}
		if p.PageSize > 0 {
			q.Set("pageSize", strconv.Itoa(int(p.PageSize)))
		}
		if p.PageToken != "" {
			q.Set("pageToken", p.PageToken)
		}
		return restCall{verb: http.MethodGet, path: "/tasks/" + esc(p.TaskID) + "/pushNotificationConfigs", q: q}, nil
	}
	return restCall{}, usagef("%s is not a method of the HTTP+JSON binding", method)
}

// listTasksQuery is the query string of ListTasks.
func listTasksQuery(req *a2a.ListTasksRequest) url.Values {
	q := url.Values{}
	if req.ContextID != "" {
		q.Set("contextId", req.ContextID)
	}
	if req.Status != "" {
		q.Set("status", string(req.Status))
	}
	if req.PageSize != nil {
		q.Set("pageSize", strconv.Itoa(int(*req.PageSize)))
	}
	if req.PageToken != "" {
		q.Set("pageToken", req.PageToken)
	}
	if req.HistoryLength != nil {
		q.Set("historyLength", strconv.Itoa(int(*req.HistoryLength)))
	}
	if req.IncludeArtifacts != nil {
		q.Set("includeArtifacts", strconv.FormatBool(*req.IncludeArtifacts))
	}
	if req.StatusTimestampAfter != "" {
		q.Set("statusTimestampAfter", req.StatusTimestampAfter)
	}
	return q
}

// restURL joins the interface URL, the tenant and path.
func (t *restTransport) restURL(path string, q url.Values) string {
	base := strings.TrimRight(t.in.URL, "/")
	if t.in.Tenant != "" {
		base += "/" + url.PathEscape(t.in.Tenant)
	}
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

type restStatus struct {
	Error *struct {
		Code    int             `json:"code"`
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Details json.RawMessage `json:"details"`
	} `json:"error"`
}

// restErr decodes a google.rpc.Status error body.
func restErr(method string, status int, body []byte) error {
	var st restStatus
	if json.Unmarshal(body, &st) == nil && st.Error != nil {
		e := wireToA2A(&jsonrpc.Error{Message: st.Error.Message, Data: st.Error.Details})
		e.Code = codeFromDetails(st.Error.Details, status)
		return rpcErr(method, e)
	}
	return protocolf("%s failed: HTTP %d %s", method, status, http.StatusText(status))
}

// codeFromDetails maps ErrorInfo.reason back to a JSON-RPC code.
func codeFromDetails(details json.RawMessage, status int) int {
	var ds []struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(details, &ds)
	for _, d := range ds {
		if code, ok := a2a.CodeForReason(d.Reason); ok {
			return code
		}
	}
	switch status {
	case http.StatusNotFound:
		return a2a.CodeTaskNotFound
	case http.StatusBadRequest:
		return a2a.CodeInvalidParams
	}
	return a2a.CodeInternalError
}

// Call implements Transport.
func (t *restTransport) Call(ctx context.Context, method string, params, out any) error {
	rc, err := restRoute(method, params)
	if err != nil {
		return err
	}
	resp, err := t.h.send(ctx, rc.verb, t.restURL(rc.path, rc.q), rc.body, "application/a2a+json, application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := readLimited(resp.Body, MaxResponseSize)
	if err != nil {
		return transportErr(method+": reading the response", err)
	}
	if resp.StatusCode/100 != 2 {
		return restErr(method, resp.StatusCode, b)
	}
	if out == nil || len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return protocolf("%s: bad response: %v", method, err)
	}
	return nil
}

// Stream implements Transport.
func (t *restTransport) Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	rc, err := restRoute(method, params)
	if err != nil {
		return err
	}
	return t.h.stream(ctx, method, t.restURL(rc.path, nil), rc.body,
		func(resp *http.Response) error {
			b, _ := readLimited(resp.Body, maxErrorBody)
			if resp.StatusCode/100 != 2 {
				return restErr(method, resp.StatusCode, b)
			}
			return nil
		},
		func(data []byte) error {
			var st restStatus
			if json.Unmarshal(data, &st) == nil && st.Error != nil {
				return restErr(method, st.Error.Code, data)
			}
			return decodeEvent(method, data, fn)
		})
}

// Close implements Transport (nothing to release).
func (t *restTransport) Close() error { return nil }
