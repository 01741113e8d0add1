package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

type restErr struct {
	Error struct {
		Code    int              `json:"code"`
		Status  string           `json:"status"`
		Message string           `json:"message"`
		Details []map[string]any `json:"details"`
	} `json:"error"`
}

func restHeaders(principal string) http.Header {
	h := http.Header{}
	h.Set("A2A-Version", "1.0")
	if principal != "" {
		h.Set(principalHeader, principal)
	}
	return h
}

func restJSON(principal string) http.Header {
	h := restHeaders(principal)
	h.Set("Content-Type", "application/a2a+json")
	return h
}

// rest performs a REST call expecting success and decodes the body into out.
func (e *testEnv) rest(method, path string, body any, principal string, out any) httpReply {
	e.t.Helper()
	var b []byte
	if body != nil {
		b = []byte(mustJSON(body))
	}
	hr := e.do(method, path, b, restJSON(principal))
	if hr.status != http.StatusOK {
		e.t.Fatalf("%s %s: HTTP %d %s", method, path, hr.status, hr.body)
	}
	if out != nil {
		if err := json.Unmarshal(hr.body, out); err != nil {
			e.t.Fatalf("%s %s: %v: %s", method, path, err, hr.body)
		}
	}
	return hr
}

// restError performs a REST call expecting an error with HTTP status and reason.
func (e *testEnv) restError(method, path string, body []byte, hdr http.Header, status int, reason string) restErr {
	e.t.Helper()
	hr := e.do(method, path, body, hdr)
	var re restErr
	if hr.status != status {
		e.t.Errorf("%s %s: HTTP %d, want %d: %s", method, path, hr.status, status, hr.body)
	}
	if ct := hr.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/a2a+json") {
		e.t.Errorf("%s %s: error Content-Type %q", method, path, ct)
	}
	if err := json.Unmarshal(hr.body, &re); err != nil {
		e.t.Fatalf("%s %s: error body is not google.rpc.Status JSON: %v: %s", method, path, err, hr.body)
	}
	if re.Error.Code != status {
		e.t.Errorf("%s %s: error.code %d, want the HTTP status %d", method, path, re.Error.Code, status)
	}
	if re.Error.Status == "" || re.Error.Message == "" {
		e.t.Errorf("%s %s: error lacks status/message: %s", method, path, hr.body)
	}
	checkErrorInfo(e.t, re.Error.Details, reason)
	return re
}

func TestRESTSendAndGet(t *testing.T) {
	e := newTestEnv(t, Config{})
	var res a2a.SendMessageResponse
	hr := e.rest("POST", "/message:send", sendReq(msg("over rest")), "", &res)
	if ct := hr.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/a2a+json") && !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	if res.Task == nil || res.Task.Status.State != a2a.TaskStateInputRequired || statusText(*res.Task) != "Echo: over rest" {
		t.Fatalf("REST SendMessage: %s", hr.body)
	}
	id := res.Task.ID

	var got a2a.Task
	e.rest("GET", "/tasks/"+id, nil, "", &got)
	if got.ID != id || len(got.History) != 2 {
		t.Errorf("GET /tasks/{id}: %+v", got)
	}
	var one a2a.Task
	e.rest("GET", "/tasks/"+id+"?historyLength=1", nil, "", &one)
	if len(one.History) != 1 || one.History[0].Role != a2a.RoleAgent {
		t.Errorf("historyLength=1: %s", mustJSON(one.History))
	}
	hr = e.rest("GET", "/tasks/"+id+"?historyLength=0", nil, "", nil)
	if strings.Contains(string(hr.body), `"history"`) {
		t.Errorf("historyLength=0: %s", hr.body)
	}
	re := e.restError("GET", "/tasks/"+id+"?historyLength=abc", nil, restHeaders(""), 400, "INVALID_PARAMS")
	checkBadRequestField(t, re.Error.Details, "historyLength")
	e.restError("GET", "/tasks/"+id+"?historyLength=-1", nil, restHeaders(""), 400, "INVALID_PARAMS")

	// A tenant prefix names a tenant this endpoint does not serve: 404
	// TASK_NOT_FOUND, never the untenanted task (TURN-10).
	e.restError("GET", "/t1/tasks/"+id, nil, restHeaders(""), 404, "TASK_NOT_FOUND")
	e.restError("POST", "/t1/message:send", []byte(mustJSON(sendReq(msg("tenant")))), restJSON(""), 404, "TASK_NOT_FOUND")
}

func TestRESTNotFoundShape(t *testing.T) {
	e := newTestEnv(t, Config{})
	hr := e.do("GET", "/tasks/t9", nil, restHeaders(""))
	if hr.status != 404 {
		t.Fatalf("HTTP %d", hr.status)
	}
	var raw map[string]map[string]any
	if err := json.Unmarshal(hr.body, &raw); err != nil {
		t.Fatalf("%v: %s", err, hr.body)
	}
	errObj := raw["error"]
	if errObj["code"] != float64(404) || errObj["status"] != "NOT_FOUND" || errObj["message"] == "" {
		t.Errorf("error object %v", errObj)
	}
	re := e.restError("GET", "/tasks/t9", nil, restHeaders(""), 404, "TASK_NOT_FOUND")
	if md, _ := re.Error.Details[0]["metadata"].(map[string]any); md["taskId"] != "t9" {
		t.Errorf("ErrorInfo metadata %v", re.Error.Details[0]["metadata"])
	}
	// Foreign task is not found too.
	var res a2a.SendMessageResponse
	e.rest("POST", "/message:send", sendReq(msg("x")), "alice", &res)
	e.restError("GET", "/tasks/"+res.Task.ID, nil, restHeaders("bob"), 404, "TASK_NOT_FOUND")
	e.restError("POST", "/tasks/"+res.Task.ID+":cancel", nil, restHeaders("bob"), 404, "TASK_NOT_FOUND")
	e.restError("GET", "/tasks/"+res.Task.ID+":subscribe", nil, restHeaders("bob"), 404, "TASK_NOT_FOUND")
	e.restError("GET", "/tasks/bad%20id", nil, restHeaders(""), 400, "INVALID_PARAMS")
}

func TestRESTList(t *testing.T) {
	e := newTestEnv(t, Config{})
	for i := 0; i < 3; i++ {
		e.rest("POST", "/message:send", sendReq(inContext(msg("x"), "rest-ctx")), "", nil)
	}
	e.rest("POST", "/message:send", sendReq(inContext(msg(""), "rest-ctx")), "", nil) // FAILED
	e.rest("POST", "/message:send", sendReq(msg("elsewhere")), "", nil)

	var res listResult
	hr := e.rest("GET", "/tasks", nil, "", &res)
	if res.TotalSize == nil || *res.TotalSize != 5 || res.NextPageToken == nil || *res.NextPageToken != "" || res.PageSize == nil || *res.PageSize != 50 {
		t.Errorf("GET /tasks: %s", trunc(string(hr.body)))
	}
	q := url.Values{"contextId": {"rest-ctx"}, "status": {"TASK_STATE_INPUT_REQUIRED"}, "pageSize": {"2"}, "historyLength": {"0"}}
	res = listResult{}
	hr = e.rest("GET", "/tasks?"+q.Encode(), nil, "", &res)
	if *res.TotalSize != 3 || len(res.Tasks) != 2 || *res.NextPageToken == "" {
		t.Fatalf("filtered page 1: %s", trunc(string(hr.body)))
	}
	if strings.Contains(string(hr.body), `"history"`) {
		t.Errorf("historyLength=0 list has history")
	}
	q.Set("pageToken", *res.NextPageToken)
	res2 := listResult{}
	e.rest("GET", "/tasks?"+q.Encode(), nil, "", &res2)
	if len(res2.Tasks) != 1 || *res2.NextPageToken != "" {
		t.Errorf("filtered page 2: %d tasks, token %q", len(res2.Tasks), *res2.NextPageToken)
	}
	// Status as its number.
	res3 := listResult{}
	e.rest("GET", "/tasks?status=4", nil, "", &res3)
	if len(res3.Tasks) != 1 || res3.Tasks[0].Status.State != a2a.TaskStateFailed {
		t.Errorf("status=4: %s", mustJSON(res3.Tasks))
	}
	// statusTimestampAfter and includeArtifacts parse.
	e.rest("GET", "/tasks?statusTimestampAfter="+url.QueryEscape(time.Now().Add(-time.Hour).UTC().Format(time.RFC3339))+"&includeArtifacts=true", nil, "", nil)
	// Errors.
	e.restError("GET", "/tasks?pageSize=101", nil, restHeaders(""), 400, "INVALID_PARAMS")
	e.restError("GET", "/tasks?pageSize=x", nil, restHeaders(""), 400, "INVALID_PARAMS")
	e.restError("GET", "/tasks?status=NOPE", nil, restHeaders(""), 400, "INVALID_PARAMS")
	e.restError("GET", "/tasks?includeArtifacts=maybe", nil, restHeaders(""), 400, "INVALID_PARAMS")
	e.restError("GET", "/tasks?pageToken=forged", nil, restHeaders(""), 400, "INVALID_PARAMS")
	e.restError("GET", "/tasks?statusTimestampAfter=now", nil, restHeaders(""), 400, "INVALID_PARAMS")
}

func TestRESTCancel(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	var res a2a.SendMessageResponse
	e.rest("POST", "/message:send", req, "", &res)
	g.waitStarted(t)
	// Empty body, no Content-Type.
	hr := e.do("POST", "/tasks/"+res.Task.ID+":cancel", nil, restHeaders(""))
	if hr.status != 200 {
		t.Fatalf("cancel: HTTP %d %s", hr.status, hr.body)
	}
	var c a2a.Task
	_ = json.Unmarshal(hr.body, &c)
	if c.Status.State != a2a.TaskStateCanceled || statusText(c) != "Task canceled." {
		t.Errorf("cancel result %s", hr.body)
	}
	// Again: cancel is idempotent (A2A 1.0 §3.3.1), the canceled task.
	hr = e.do("POST", "/tasks/"+res.Task.ID+":cancel", []byte(`{}`), restJSON(""))
	var again a2a.Task
	if _ = json.Unmarshal(hr.body, &again); hr.status != 200 || again.ID != res.Task.ID || again.Status.State != a2a.TaskStateCanceled {
		t.Errorf("second cancel: HTTP %d %s, want 200 and the canceled task", hr.status, hr.body)
	}
	e.restError("POST", "/tasks/nope:cancel", nil, restHeaders(""), 404, "TASK_NOT_FOUND")
	// Body with metadata and the tenant prefix.
	e.rest("POST", "/message:send", req2(msg("y")), "", &res)
	g.waitStarted(t)
	g.release <- struct{}{}
	e.waitState("", res.Task.ID, a2a.TaskStateInputRequired, 5*time.Second)
	e.restError("POST", "/t1/tasks/"+res.Task.ID+":cancel", []byte(`{"metadata":{"why":"test"}}`), restJSON(""), 404, "TASK_NOT_FOUND")
	var c2 a2a.Task
	e.rest("POST", "/tasks/"+res.Task.ID+":cancel", map[string]any{"metadata": map[string]any{"why": "test"}}, "", &c2)
	if c2.Status.State != a2a.TaskStateCanceled {
		t.Errorf("cancel with metadata: %s", c2.Status.State)
	}
	// Wrong verb.
	hr = e.do("GET", "/tasks/"+res.Task.ID+":cancel", nil, restHeaders(""))
	if hr.status != http.StatusMethodNotAllowed {
		t.Errorf("GET :cancel: HTTP %d", hr.status)
	}
}

func req2(m *a2a.Message) *a2a.SendMessageRequest {
	r := sendReq(m)
	r.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	return r
}

func TestRESTStream(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 2}, ToolTrace: true})
	s := e.openStream("/message:stream", mustJSON(sendReq(msg("rest stream"))), restJSON(""))
	evs := s.restAll()
	if len(evs) < 4 || evs[0].Task == nil || evs[0].Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("REST stream events: %s", mustJSON(evs))
	}
	if eventState(evs[len(evs)-1]) != a2a.TaskStateInputRequired {
		t.Errorf("last REST event: %s", mustJSON(evs[len(evs)-1]))
	}
	// Errors before the stream are plain JSON.
	e.restError("POST", "/message:stream", []byte(`{"message":"x"}`), restJSON(""), 400, "INVALID_PARAMS")
	e.restError("POST", "/message:stream", []byte(`{not json`), restJSON(""), 400, "PARSE_ERROR")
}

func TestRESTSubscribe(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	for _, verb := range []string{"GET", "POST"} {
		t.Run(verb, func(t *testing.T) {
			req := sendReq(msg("x"))
			req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
			var res a2a.SendMessageResponse
			e.rest("POST", "/message:send", req, "", &res)
			g.waitStarted(t)
			s, resp := e.tryStream(verb, "/tasks/"+res.Task.ID+":subscribe", "", restHeaders(""))
			if s == nil {
				t.Fatalf("%s :subscribe: HTTP %d %q", verb, resp.StatusCode, resp.Header.Get("Content-Type"))
			}
			d, ok := s.next()
			if !ok {
				t.Fatal("no first event")
			}
			first := decodeStreamResponse(t, []byte(d))
			if first.Task == nil || first.Task.ID != res.Task.ID {
				t.Errorf("first event %s", d)
			}
			g.release <- struct{}{}
			rest := s.restAll()
			if len(rest) == 0 || eventState(rest[len(rest)-1]) != a2a.TaskStateInputRequired {
				t.Errorf("subscription: %s", mustJSON(rest))
			}
		})
	}
	// Terminal → 400 UNSUPPORTED_OPERATION as JSON.
	var res a2a.SendMessageResponse
	e.rest("POST", "/message:send", sendReq(msg("")), "", &res) // FAILED at once
	e.restError("POST", "/tasks/"+res.Task.ID+":subscribe", nil, restHeaders(""), 400, "UNSUPPORTED_OPERATION")
	e.restError("GET", "/t1/tasks/unknown:subscribe", nil, restHeaders(""), 404, "TASK_NOT_FOUND")
}

func TestRESTPushAndExtendedCard(t *testing.T) {
	e := newTestEnv(t, Config{})
	var res a2a.SendMessageResponse
	e.rest("POST", "/message:send", sendReq(msg("x")), "", &res)
	id := res.Task.ID
	e.restError("POST", "/tasks/"+id+"/pushNotificationConfigs", []byte(`{"url":"https://example.com/h"}`), restJSON(""), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	e.restError("GET", "/tasks/"+id+"/pushNotificationConfigs", nil, restHeaders(""), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	e.restError("GET", "/tasks/"+id+"/pushNotificationConfigs/c1", nil, restHeaders(""), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	e.restError("DELETE", "/tasks/"+id+"/pushNotificationConfigs/c1", nil, restHeaders(""), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	e.restError("DELETE", "/t1/tasks/"+id+"/pushNotificationConfigs/c1", nil, restHeaders(""), 400, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	e.restError("GET", "/extendedAgentCard", nil, restHeaders(""), 400, "UNSUPPORTED_OPERATION")
}

func TestExtendedCardConfigured(t *testing.T) {
	card := &a2a.AgentCard{Name: "ext", Description: "d", Version: "1"}
	var sawRequest bool
	e := newTestEnv(t, Config{ExtendedCard: func(_ context.Context, baseURL string) (*a2a.AgentCard, error) {
		sawRequest = baseURL != ""
		return card, nil
	}})
	var got a2a.AgentCard
	e.rest("GET", "/extendedAgentCard", nil, "", &got)
	if got.Name != "ext" {
		t.Errorf("REST extended card: %+v", got)
	}
	if !sawRequest {
		t.Error("ExtendedCard callback got no base URL of the request")
	}
	// §13.3: private caching with the transport's defaults (max-age 0,
	// Vary: Authorization), a strong ETag, 304 for it.
	hr := e.do("GET", "/extendedAgentCard", nil, restHeaders(""))
	etag := hr.header.Get("Etag")
	if hr.status != 200 || hr.header.Get("Cache-Control") != "private, max-age=0" || hr.header.Get("Vary") != "Authorization" || len(etag) < 3 || etag[0] != '"' {
		t.Errorf("extended card headers: %d %v", hr.status, hr.header)
	}
	h := restHeaders("")
	h.Set("If-None-Match", etag)
	if nm := e.do("GET", "/extendedAgentCard", nil, h); nm.status != http.StatusNotModified || len(nm.body) != 0 || nm.header.Get("Etag") != etag {
		t.Errorf("If-None-Match: %d %q", nm.status, nm.body)
	}
	var viaRPC a2a.AgentCard
	e.result("", a2a.MethodGetExtendedAgentCard, nil, &viaRPC)
	if viaRPC.Name != "ext" {
		t.Errorf("JSON-RPC extended card: %+v", viaRPC)
	}
	e2 := newTestEnv(t, Config{ExtendedCard: func(context.Context, string) (*a2a.AgentCard, error) { return nil, nil }})
	e2.rpcError("", a2a.MethodGetExtendedAgentCard, nil, a2a.CodeExtendedCardNotConfigured)
	// §5.4 on HTTP+JSON: 400 with the gRPC name FAILED_PRECONDITION, and
	// nothing cacheable about an error.
	re := e2.restError("GET", "/extendedAgentCard", nil, restHeaders(""), 400, "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
	if re.Error.Status != "FAILED_PRECONDITION" {
		t.Errorf("extended card not configured: status %q, want FAILED_PRECONDITION", re.Error.Status)
	}
}

func TestRESTVersionAndMethods(t *testing.T) {
	e := newTestEnv(t, Config{})
	h := restJSON("")
	h.Del("A2A-Version")
	re := e.restError("GET", "/tasks", nil, h, 400, "VERSION_NOT_SUPPORTED")
	if re.Error.Status != "FAILED_PRECONDITION" {
		t.Errorf("status %q", re.Error.Status)
	}
	var res listResult
	e.rest("GET", "/tasks?A2A-Version=1.0", nil, "", &res)
	hr := e.do("GET", "/message:send", nil, restHeaders(""))
	if hr.status != http.StatusMethodNotAllowed || hr.header.Get("Allow") == "" {
		t.Errorf("GET /message:send: HTTP %d Allow %q", hr.status, hr.header.Get("Allow"))
	}
	hr = e.do("DELETE", "/tasks/abc", nil, restHeaders(""))
	if hr.status != http.StatusMethodNotAllowed {
		t.Errorf("DELETE /tasks/abc: HTTP %d", hr.status)
	}
	// Wrong content type on a body route: 415 ContentTypeNotSupported
	// (RPC-15); JSON types with parameters are accepted.
	h = restHeaders("")
	h.Set("Content-Type", "text/plain")
	e.restError("POST", "/message:send", []byte(mustJSON(sendReq(msg("x")))), h, 415, "CONTENT_TYPE_NOT_SUPPORTED")
	for _, ct := range []string{"application/a2a+json", "application/json; charset=utf-8", "APPLICATION/JSON"} {
		h = restHeaders("")
		h.Set("Content-Type", ct)
		if hr := e.do("POST", "/message:send", []byte(mustJSON(sendReq(msg("x")))), h); hr.status != http.StatusOK {
			t.Errorf("Content-Type %q: HTTP %d %s, want 200", ct, hr.status, hr.body)
		}
	}
	// Not an A2A route: left to the next handler.
	for _, p := range []string{"/other", "/tasks/a/b", "/a/b/c/d/e", "/message:other"} {
		if hr := e.do("GET", p, nil, restHeaders("")); hr.status != http.StatusTeapot {
			t.Errorf("GET %s: HTTP %d, want it passed on", p, hr.status)
		}
	}
}

func TestRESTBodyTooLarge(t *testing.T) {
	e := newTestEnvWith(t, Config{}, TransportConfig{MaxBodyBytes: 512})
	big := mustJSON(sendReq(msg(strings.Repeat("x", 2048))))
	e.restError("POST", "/message:send", []byte(big), restJSON(""), 400, "")
}

// TestTenantNotServed covers TURN-10 before multi-agent sites: a request
// naming any tenant — the REST `/{tenant}/…` prefix, the body's or the
// JSON-RPC params' `tenant` field — is TaskNotFoundError (404 / -32001) for
// every operation, and never reaches the untenanted tasks.
func TestTenantNotServed(t *testing.T) {
	e, _ := newPushEnv(t)
	task := e.send("", &a2a.SendMessageRequest{Message: msg("hi")})
	id := task.ID
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/acme/tasks/" + id, ""},
		{"GET", "/acme/tasks", ""},
		{"POST", "/acme/tasks/" + id + ":cancel", "{}"},
		{"GET", "/acme/tasks/" + id + ":subscribe", ""},
		{"POST", "/acme/message:send", mustJSON(sendReq(msg("x")))},
		{"POST", "/acme/message:stream", mustJSON(sendReq(msg("x")))},
		{"POST", "/message:send", `{"tenant":"acme","message":{"role":"ROLE_USER","messageId":"m9","parts":[{"text":"x"}]}}`},
		{"GET", "/acme/tasks/" + id + "/pushNotificationConfigs", ""},
		{"POST", "/acme/tasks/" + id + "/pushNotificationConfigs", `{"url":"http://127.0.0.1:9/h"}`},
		{"GET", "/acme/tasks/" + id + "/pushNotificationConfigs/" + id, ""},
		{"DELETE", "/acme/tasks/" + id + "/pushNotificationConfigs/" + id, ""},
		{"GET", "/acme/extendedAgentCard", ""},
	} {
		var body []byte
		hdr := restHeaders("")
		if c.body != "" {
			body, hdr = []byte(c.body), restJSON("")
		}
		e.restError(c.method, c.path, body, hdr, 404, "TASK_NOT_FOUND")
	}
	for _, c := range []struct {
		method string
		params map[string]any
	}{
		{a2a.MethodGetTask, map[string]any{"tenant": "acme", "id": id}},
		{a2a.MethodListTasks, map[string]any{"tenant": "acme"}},
		{a2a.MethodCancelTask, map[string]any{"tenant": "acme", "id": id}},
		{a2a.MethodSendMessage, map[string]any{"tenant": "acme", "message": msg("x")}},
		{a2a.MethodCreatePushConfig, map[string]any{"tenant": "acme", "taskId": id, "url": "http://127.0.0.1:9/h"}},
		{a2a.MethodGetPushConfig, map[string]any{"tenant": "acme", "taskId": id, "id": id}},
		{a2a.MethodListPushConfigs, map[string]any{"tenant": "acme", "taskId": id}},
		{a2a.MethodDeletePushConfig, map[string]any{"tenant": "acme", "taskId": id, "id": id}},
		{a2a.MethodGetExtendedAgentCard, map[string]any{"tenant": "acme"}},
	} {
		e.rpcError("", c.method, c.params, a2a.CodeTaskNotFound)
	}
	// Streaming methods over JSON-RPC answer the error before any event.
	rep := e.call("", a2a.MethodSubscribeToTask, map[string]any{"tenant": "acme", "id": id})
	if rep.Error == nil || rep.Error.Code != a2a.CodeTaskNotFound {
		t.Fatalf("SubscribeToTask with a tenant: %+v", rep)
	}
	// No tenant (or an empty one) is the site's own agent.
	e.result("", a2a.MethodGetTask, map[string]any{"tenant": "", "id": id}, nil)
	if n := len(e.getTask("", id).History); n == 0 {
		t.Fatal("untenanted task lost its history")
	}
}
