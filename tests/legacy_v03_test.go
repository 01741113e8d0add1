package tests

// A2A 0.3 clients on the 1.0 endpoint (RPC-2, legacy_v03): the official JS
// SDK 0.3 client (npm alias a2a-sdk-v03 = @a2a-js/sdk@0.3.14) against the
// built gateway with auth and push on, and 0.3 and 1.0 callers sharing
// tasks and contexts.

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const legacyToken = "legacy-test-token"

// legacySummary is what client_v03.mjs prints.
type legacySummary struct {
	OK       bool                      `json:"ok"`
	SDK      string                    `json:"sdk"`
	Steps    map[string]map[string]any `json:"steps"`
	Failures []string                  `json:"failures"`
}

// startLegacyGateway starts a gateway with legacy_v03, bearer auth and push.
func startLegacyGateway(t *testing.T, backendBlock string) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, `a2a {
	card {
		name legacy-agent
		skill echo {
			name Echo
			description "Echoes the prompt back."
			tags echo
		}
	}
	auth {
		bearer `+legacyToken+`
	}
	legacy_v03
	push {
		allow_private_networks 127.0.0.0/8
	}
	`+backendBlock+`
}`, harness.Options{
		Global:       "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}",
		StartTimeout: 30 * time.Second,
	})
}

// legacyRPC posts a 0.3 JSON-RPC request (no A2A-Version header).
func legacyRPC(t *testing.T, url, method string, params any) (map[string]any, map[string]any) {
	t.Helper()
	return harness.At(url, harness.Bearer(legacyToken)).RPC(t, method, params, harness.Header("A2A-Version", ""))
}

func TestLegacyV03JSSDK(t *testing.T) {
	t.Parallel()
	node, dir := interopNodeSDK(t)
	fast := startLegacyGateway(t, "backend echo")
	slow := startLegacyGateway(t, interopSlowEcho)
	hits := make(chan legacyHit, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		hits <- legacyHit{path: r.URL.Path, token: r.Header.Get("X-A2A-Notification-Token"), body: body}
		w.WriteHeader(http.StatusOK)
	}))
	defer hook.Close()

	var sum legacySummary
	stdout, runErr := interopRunNode(t, 2*time.Minute, node, dir, &sum, "client_v03.mjs", fast.URL, slow.URL, legacyToken, hook.URL+"/hook")
	for _, f := range sum.Failures {
		t.Errorf("JS SDK 0.3: %s", f)
	}
	if runErr != nil {
		t.Errorf("client_v03.mjs failed: %v", runErr)
	}
	if sum.SDK != "@a2a-js/sdk@0.3.14" {
		t.Errorf("client_v03.mjs ran %q, want @a2a-js/sdk@0.3.14", sum.SDK)
	}
	want := func(step, key string, value any) {
		t.Helper()
		s := sum.Steps[step]
		if s == nil || s["ok"] != true {
			t.Errorf("step %s did not succeed: %v", step, s)
			return
		}
		if s[key] != value {
			t.Errorf("%s: %s = %v, want %v", step, key, s[key], value)
		}
	}
	want("agentCard", "name", "legacy-agent")
	want("agentCard", "protocolVersion", "0.3.0")
	want("agentCard", "preferredTransport", "JSONRPC")
	want("sendMessage", "kind", "task")
	want("sendMessage", "state", "input-required")
	want("sendMessage", "text", "Echo: hello from a2a-js 0.3")
	want("followUp", "state", "input-required")
	if a, b := sum.Steps["sendMessage"], sum.Steps["followUp"]; a != nil && b != nil && (a["contextId"] != b["contextId"] || a["taskId"] == b["taskId"]) {
		t.Errorf("follow-up: %v / %v, want the same context and a new task", b, a)
	}
	want("sendMessageStream", "firstEvent", "task")
	want("sendMessageStream", "lastEvent", "status-update(input-required,final=true)")
	want("getTask", "kind", "task")
	want("getTask", "state", "input-required")
	want("getTask", "firstRole", "user")
	want("getTask", "unknownIdError", "TaskNotFoundJSONRPCError")
	want("pushConfig", "gotID", "cfg-1")
	want("pushConfig", "gotScheme", "Bearer")
	want("pushConfig", "listed", float64(1))
	want("cancelTask", "state", "canceled")
	want("resubscribeTask", "firstEvent", "task")
	want("resubscribeTask", "lastEvent", "status-update(input-required,final=true)")
	if t.Failed() {
		t.Logf("summary: %s", stdout)
	}

	// The task the 0.3 client made is an ordinary task to a 1.0 caller.
	taskID, _ := sum.Steps["sendMessage"]["taskId"].(string)
	contextID, _ := sum.Steps["sendMessage"]["contextId"].(string)
	if taskID == "" {
		t.Fatal("no task id from the 0.3 client")
	}
	res, rerr := harness.At(fast.URL, harness.Bearer(legacyToken)).RPC(t, "GetTask", map[string]any{"id": taskID})
	if rerr != nil {
		t.Fatalf("1.0 GetTask of the 0.3 task: %v", rerr)
	}
	if st := res["status"].(map[string]any)["state"]; st != "TASK_STATE_INPUT_REQUIRED" || res["contextId"] != contextID {
		t.Errorf("1.0 GetTask of the 0.3 task: %v", res)
	}
	// The 1.0 push config view of the config the 0.3 client set.
	pc, rerr := harness.At(fast.URL, harness.Bearer(legacyToken)).RPC(t, "GetTaskPushNotificationConfig", map[string]any{"taskId": taskID, "id": "cfg-1"})
	if rerr != nil || pc["url"] != hook.URL+"/hook" || pc["token"] != "push-token-03" || pc["authentication"].(map[string]any)["scheme"] != "Bearer" {
		t.Errorf("1.0 view of the 0.3 push config: %v %v", pc, rerr)
	}

	// A 1.0 config on the same task; the next turn-ending state is pushed
	// in 0.3 shape to the 0.3 config and in 1.0 shape to the 1.0 one.
	if _, rerr := harness.At(fast.URL, harness.Bearer(legacyToken)).RPC(t, "CreateTaskPushNotificationConfig", map[string]any{"taskId": taskID, "id": "cfg-10", "url": hook.URL + "/hook10", "token": "push-token-10"}); rerr != nil {
		t.Fatalf("1.0 push config: %v", rerr)
	}
	if _, rerr := harness.At(fast.URL, harness.Bearer(legacyToken)).RPC(t, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": "m-follow", "role": "ROLE_USER", "taskId": taskID, "contextId": contextID, "parts": []any{map[string]any{"text": "continue"}},
	}}); rerr != nil {
		t.Fatalf("1.0 follow-up on the 0.3 task: %v", rerr)
	}
	got := map[string]legacyHit{}
	deadline := time.After(15 * time.Second)
	for len(got) < 2 {
		select {
		case h := <-hits:
			got[h.path] = h
		case <-deadline:
			t.Fatalf("push deliveries: got %v, want /hook and /hook10", got)
		}
	}
	h03, h10 := got["/hook"], got["/hook10"]
	if h03.body["kind"] != "task" || h03.body["id"] != taskID || h03.body["status"].(map[string]any)["state"] != "input-required" || h03.token != "push-token-03" {
		t.Errorf("push to the 0.3 config: token %q body %v, want a 0.3 task", h03.token, h03.body)
	}
	if _, ok := h10.body["kind"]; ok || h10.token != "push-token-10" || (h10.body["task"] == nil && h10.body["statusUpdate"] == nil) {
		t.Errorf("push to the 1.0 config: token %q body %v, want a 1.0 StreamResponse", h10.token, h10.body)
	}
}

// legacyHit is one push delivery the webhook got.
type legacyHit struct {
	path, token string
	body        map[string]any
}

// TestLegacyV03SharedContext: a 1.0 caller continues the context of a 0.3
// caller and the 0.3 caller reads the 1.0 caller's task (RPC-2).
func TestLegacyV03SharedContext(t *testing.T) {
	t.Parallel()
	gw := startLegacyGateway(t, "backend echo")
	res, rerr := legacyRPC(t, gw.URL, "message/send", map[string]any{"message": map[string]any{
		"kind": "message", "messageId": "m-03", "role": "user",
		"parts": []any{map[string]any{"kind": "text", "text": "from 0.3"}, map[string]any{"kind": "data", "data": map[string]any{"k": 1}}},
	}})
	if rerr != nil {
		t.Fatalf("message/send: %v", rerr)
	}
	if res["kind"] != "task" || res["status"].(map[string]any)["state"] != "input-required" {
		t.Fatalf("message/send: %v", res)
	}
	ctxID := res["contextId"].(string)
	r10, rerr := harness.At(gw.URL, harness.Bearer(legacyToken)).RPC(t, "SendMessage", map[string]any{"message": map[string]any{
		"messageId": "m-10", "role": "ROLE_USER", "contextId": ctxID, "parts": []any{map[string]any{"text": "from 1.0"}},
	}})
	if rerr != nil {
		t.Fatalf("1.0 SendMessage in the 0.3 context: %v", rerr)
	}
	task10 := r10["task"].(map[string]any)
	if task10["contextId"] != ctxID {
		t.Fatalf("1.0 follow-up landed in context %v, want %s", task10["contextId"], ctxID)
	}
	got, rerr := legacyRPC(t, gw.URL, "tasks/get", map[string]any{"id": task10["id"], "historyLength": 5})
	if rerr != nil {
		t.Fatalf("tasks/get of the 1.0 task: %v", rerr)
	}
	hist, _ := got["history"].([]any)
	if got["kind"] != "task" || len(hist) == 0 {
		t.Fatalf("tasks/get: %v", got)
	}
	first := hist[0].(map[string]any)
	part := first["parts"].([]any)[0].(map[string]any)
	if first["kind"] != "message" || first["role"] != "user" || part["kind"] != "text" || part["text"] != "from 1.0" {
		t.Errorf("tasks/get history[0] = %v, want a 0.3 user message with a text part", first)
	}

	// Without legacy_v03 semantics for 1.0 names: a 1.0 method with no
	// version header is still refused (RPC-2), and an unknown 0.3-looking
	// method is not found.
	if _, rerr := legacyRPC(t, gw.URL, "GetTask", map[string]any{"id": task10["id"]}); rerr == nil || rerr["code"] != float64(-32009) {
		t.Errorf("1.0 method without A2A-Version: %v, want -32009", rerr)
	}
	// The extended card of a 0.3 caller is a plain 0.3 card.
	ext, rerr := legacyRPC(t, gw.URL, "agent/getAuthenticatedExtendedCard", nil)
	if rerr != nil {
		t.Fatalf("agent/getAuthenticatedExtendedCard: %v", rerr)
	}
	bearer, _ := ext["securitySchemes"].(map[string]any)["bearerAuth"].(map[string]any)
	if ext["protocolVersion"] != "0.3.0" || ext["url"] != gw.URL+"/" || ext["preferredTransport"] != "JSONRPC" || bearer["type"] != "http" || ext["supportedInterfaces"] != nil {
		t.Errorf("extended card for 0.3: %v", ext)
	}
	// Push config set without an id (the task's default config), then delete: null.
	set, rerr := legacyRPC(t, gw.URL, "tasks/pushNotificationConfig/set", map[string]any{"taskId": task10["id"], "pushNotificationConfig": map[string]any{"url": "http://127.0.0.1:9/hook"}})
	if rerr != nil || set["pushNotificationConfig"].(map[string]any)["id"] != task10["id"] {
		t.Fatalf("push set without id: %v %v", set, rerr)
	}
	del := harness.At(gw.URL, harness.Bearer(legacyToken)).Call(t, "tasks/pushNotificationConfig/delete", map[string]any{"id": task10["id"], "pushNotificationConfigId": task10["id"]}, harness.Header("A2A-Version", ""))
	if !strings.Contains(string(del.Raw), `"result":null`) {
		t.Errorf("push delete: %s, want a null result", del.Raw)
	}

	// Bad 0.3 params are invalid params naming the field.
	_, rerr = legacyRPC(t, gw.URL, "message/send", map[string]any{"message": map[string]any{
		"kind": "message", "messageId": "m-bad", "role": "user", "parts": []any{map[string]any{"kind": "file", "file": map[string]any{}}},
	}})
	if rerr == nil || rerr["code"] != float64(-32602) || !strings.Contains(rerr["message"].(string)+string(mustJSON(rerr["data"])), "message.parts[0]") {
		t.Errorf("bad 0.3 file part: %v, want -32602 naming message.parts[0]", rerr)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// TestLegacyV03Off: without legacy_v03 a 0.3 request keeps its RPC-2
// answers: -32009 without a version header, -32601 with A2A-Version 1.0.
func TestLegacyV03Off(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname plain\n\t}\n\tbackend echo\n}")
	params := map[string]any{"message": map[string]any{"kind": "message", "messageId": "m", "role": "user", "parts": []any{map[string]any{"kind": "text", "text": "x"}}}}
	if _, rerr := harness.At(gw.URL).RPC(t, "message/send", params, harness.Header("A2A-Version", "")); rerr == nil || rerr["code"] != float64(-32009) {
		t.Errorf("message/send without a version: %v, want -32009", rerr)
	}
	if _, rerr := harness.At(gw.URL).RPC(t, "message/send", params); rerr == nil || rerr["code"] != float64(-32601) {
		t.Errorf("message/send with A2A-Version 1.0: %v, want -32601", rerr)
	}
	card := harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, http.MethodGet, "").JSON(t)
	if _, ok := card["url"]; ok {
		t.Errorf("the card has the 0.3 url member without legacy_v03: %v", card)
	}
}
