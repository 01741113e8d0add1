package agent

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// limitReply posts one JSON-RPC call as principal and returns the HTTP
// status, the Retry-After header and the JSON-RPC error (nil on success).
func limitReply(e *testEnv, principal, method string, params any) (int, string, *rpcErrorT) {
	e.t.Helper()
	hr := e.do(http.MethodPost, "/", []byte(rpcBody(nextRPCID(), method, params)), v1Headers(principal))
	var rep rpcReply
	if err := json.Unmarshal(hr.body, &rep); err != nil {
		e.t.Fatalf("%s: not a JSON-RPC reply (HTTP %d): %s", method, hr.status, hr.body)
	}
	return hr.status, hr.header.Get("Retry-After"), rep.Error
}

func sendParams(text string) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": newID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
}

// TestLimitsAllowMethods: a principal limited to GetTask and ListTasks is
// refused every other method with 403 / PERMISSION_DENIED on JSON-RPC and
// REST, others are not limited (AUTH-6).
func TestLimitsAllowMethods(t *testing.T) {
	e := newTestEnv(t, Config{Limits: map[string]LimitRule{"monitor": {AllowMethods: []string{a2a.MethodGetTask, a2a.MethodListTasks}}}})
	task := e.send("alice", &a2a.SendMessageRequest{Message: msg("hi")})

	for _, m := range []string{a2a.MethodSendMessage, a2a.MethodCancelTask, a2a.MethodSubscribeToTask, a2a.MethodCreatePushConfig, a2a.MethodGetExtendedAgentCard} {
		status, _, rerr := limitReply(e, "monitor", m, map[string]any{"id": task.ID, "taskId": task.ID, "message": msg("x")})
		if status != http.StatusForbidden || rerr == nil || rerr.Code != a2a.CodePermissionDenied {
			t.Fatalf("%s as monitor: HTTP %d error %+v, want 403 %d", m, status, rerr, a2a.CodePermissionDenied)
		}
		checkErrorInfo(t, rerr.Data, "PERMISSION_DENIED")
	}
	// Allowed methods reach the service: the task is alice's, so not found.
	if status, _, rerr := limitReply(e, "monitor", a2a.MethodGetTask, map[string]any{"id": task.ID}); status != 200 || rerr == nil || rerr.Code != a2a.CodeTaskNotFound {
		t.Fatalf("GetTask as monitor: HTTP %d %+v, want 200 TaskNotFound", status, rerr)
	}
	if status, _, rerr := limitReply(e, "monitor", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
		t.Fatalf("ListTasks as monitor: HTTP %d %+v", status, rerr)
	}
	// REST: the same refusal as a google.rpc.Status with HTTP 403.
	hr := e.do(http.MethodPost, "/message:send", []byte(mustJSON(sendParams("x"))), v1Headers("monitor"))
	if hr.status != http.StatusForbidden {
		t.Fatalf("REST send as monitor: HTTP %d %s, want 403", hr.status, hr.body)
	}
	var st struct {
		Error struct {
			Status string `json:"status"`
		} `json:"error"`
	}
	if json.Unmarshal(hr.body, &st); st.Error.Status != "PERMISSION_DENIED" {
		t.Errorf("REST status %q, want PERMISSION_DENIED: %s", st.Error.Status, hr.body)
	}
	// A principal without a rule (and no "*") is unlimited.
	if status, _, rerr := limitReply(e, "bob", a2a.MethodSendMessage, sendParams("y")); status != 200 || rerr != nil {
		t.Fatalf("send as bob: HTTP %d %+v", status, rerr)
	}
}

// TestLimitsRate: beyond its burst a principal gets 429 with Retry-After
// and RESOURCE_EXHAUSTED (with RetryInfo); tokens come back with time; each
// principal under "*" has its own bucket (AUTH-6).
func TestLimitsRate(t *testing.T) {
	e := newTestEnv(t, Config{Limits: map[string]LimitRule{AnyPrincipal: {Rate: 5, Burst: 3}}})
	for i := 0; i < 3; i++ {
		if status, _, rerr := limitReply(e, "alice", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
			t.Fatalf("request %d within the burst: HTTP %d %+v", i, status, rerr)
		}
	}
	status, retry, rerr := limitReply(e, "alice", a2a.MethodListTasks, map[string]any{})
	if status != http.StatusTooManyRequests || rerr == nil || rerr.Code != a2a.CodeResourceExhausted {
		t.Fatalf("request over the burst: HTTP %d %+v, want 429", status, rerr)
	}
	if n, err := strconv.Atoi(retry); err != nil || n < 1 {
		t.Errorf("Retry-After = %q, want a positive number of seconds", retry)
	}
	checkErrorInfo(t, rerr.Data, "RESOURCE_EXHAUSTED")
	found := false
	for _, d := range rerr.Data {
		if d["@type"] == "type.googleapis.com/google.rpc.RetryInfo" && d["retryDelay"] != nil {
			found = true
		}
	}
	if !found {
		t.Errorf("no RetryInfo detail in %s", rerr.Data)
	}
	// Another principal has its own bucket.
	if status, _, rerr := limitReply(e, "bob", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
		t.Fatalf("bob's first request: HTTP %d %+v", status, rerr)
	}
	// At 5/s a token is back within 200ms.
	time.Sleep(300 * time.Millisecond) // sleep: the rate refill is what is tested
	if status, _, rerr := limitReply(e, "alice", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
		t.Fatalf("after the refill: HTTP %d %+v", status, rerr)
	}
	// REST carries the same 429 and Retry-After.
	for i := 0; i < 5; i++ {
		hr := e.do(http.MethodGet, "/tasks", nil, v1Headers("carol"))
		if i < 3 && hr.status != 200 {
			t.Fatalf("REST list %d: HTTP %d %s", i, hr.status, hr.body)
		}
		if i == 4 && (hr.status != http.StatusTooManyRequests || hr.header.Get("Retry-After") == "") {
			t.Fatalf("REST list over the rate: HTTP %d Retry-After %q", hr.status, hr.header.Get("Retry-After"))
		}
	}
}

// TestLimitsMaxTurns: a principal's turns beyond max_turns are refused with
// 429 while the first runs, and allowed again once it ended (AUTH-6).
func TestLimitsMaxTurns(t *testing.T) {
	e := newTestEnv(t, Config{
		Backend: backend.EchoBackend{Chunks: 2, Delay: 300 * time.Millisecond},
		Limits:  map[string]LimitRule{"ci": {MaxTurns: 1}},
	})
	var first a2a.Task
	params := sendParams("slow")
	params["configuration"] = map[string]any{"returnImmediately": true}
	var res a2a.SendMessageResponse
	e.result("ci", a2a.MethodSendMessage, params, &res)
	if res.Task == nil {
		t.Fatal("no task returned")
	}
	first = *res.Task
	status, _, rerr := limitReply(e, "ci", a2a.MethodSendMessage, sendParams("second"))
	if status != http.StatusTooManyRequests || rerr == nil || rerr.Code != a2a.CodeResourceExhausted {
		t.Fatalf("second concurrent turn: HTTP %d %+v, want 429", status, rerr)
	}
	// Reads are not turns.
	if status, _, rerr := limitReply(e, "ci", a2a.MethodGetTask, map[string]any{"id": first.ID}); status != 200 || rerr != nil {
		t.Fatalf("GetTask during the turn: HTTP %d %+v", status, rerr)
	}
	e.waitState("ci", first.ID, a2a.TaskStateInputRequired, 10*time.Second)
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, rerr = limitReply(e, "ci", a2a.MethodSendMessage, sendParams("third"))
		if status == 200 && rerr == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("turn after the first ended still refused: HTTP %d %+v", status, rerr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestLimitRuleValidate refuses unknown methods and bad numbers.
func TestLimitRuleValidate(t *testing.T) {
	for _, r := range []LimitRule{{AllowMethods: []string{"tasks/get"}}, {Rate: -1}, {Burst: -1}, {MaxTurns: -2}} {
		if r.Validate() == nil {
			t.Errorf("%+v: accepted", r)
		}
	}
	if err := (LimitRule{AllowMethods: []string{a2a.MethodGetTask}, Rate: 2, Burst: 4, MaxTurns: 1}).Validate(); err != nil {
		t.Errorf("valid rule refused: %v", err)
	}
}

// TestRequestInfo: the handler records the method, task and context of a
// call in Call.Info (the Caddy request variables of AUTH-6).
func TestRequestInfo(t *testing.T) {
	e := newTestEnv(t, Config{})
	info := &RequestInfo{}
	resp, err := NewHandler(e.svc).SendMessage(t.Context(), Call{Principal: "alice", Version: "1.0", Info: info}, &a2a.SendMessageRequest{Message: msg("hi")})
	if err != nil || resp.Task == nil {
		t.Fatalf("SendMessage: %v", err)
	}
	m, task, ctxID := info.Get()
	if m != a2a.MethodSendMessage || task != resp.Task.ID || ctxID != resp.Task.ContextID {
		t.Errorf("info = %q %q %q, want SendMessage %s %s", m, task, ctxID, resp.Task.ID, resp.Task.ContextID)
	}
}

// TestLimitsSharedCounters: two services given the same LimitCounters for
// a rule count a principal's requests once across both (AUTH-10: the
// agents of one site); a rule without them counts on its own.
func TestLimitsSharedCounters(t *testing.T) {
	shared := NewLimitCounters()
	rule := LimitRule{Rate: 0.001, Burst: 2, Counters: shared}
	a := newTestEnv(t, Config{Limits: map[string]LimitRule{AnyPrincipal: rule}})
	b := newTestEnv(t, Config{Limits: map[string]LimitRule{AnyPrincipal: rule}})
	own := newTestEnv(t, Config{Limits: map[string]LimitRule{AnyPrincipal: {Rate: 0.001, Burst: 2}}})
	for i, e := range []*testEnv{a, b} {
		if status, _, rerr := limitReply(e, "alice", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
			t.Fatalf("request %d within the shared burst: HTTP %d %+v", i, status, rerr)
		}
	}
	for _, e := range []*testEnv{a, b} {
		if status, _, _ := limitReply(e, "alice", a2a.MethodListTasks, map[string]any{}); status != http.StatusTooManyRequests {
			t.Errorf("over the shared burst: HTTP %d, want 429", status)
		}
	}
	if status, _, rerr := limitReply(own, "alice", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
		t.Errorf("a service with its own counters: HTTP %d %+v", status, rerr)
	}
	if status, _, rerr := limitReply(a, "bob", a2a.MethodListTasks, map[string]any{}); status != 200 || rerr != nil {
		t.Errorf("another principal: HTTP %d %+v", status, rerr)
	}
}
