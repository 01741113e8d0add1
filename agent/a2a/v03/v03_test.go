package v03

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// jsonEq compares two JSON documents by value.
func jsonEq(t *testing.T, got any, want string) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestParamsTo10 translates the params of 0.3 requests (the examples of the
// A2A 0.3 specification, §7) into the params of their 1.0 method (RPC-2).
func TestParamsTo10(t *testing.T) {
	cases := []struct {
		method, params, want10, wantParams string
	}{
		{MethodSend, `{"message":{"role":"user","parts":[{"kind":"text","text":"tell me a joke"}],"messageId":"9229e770-767c-417b-a0b0-f0741243c589"},"metadata":{}}`,
			a2a.MethodSendMessage, `{"message":{"messageId":"9229e770-767c-417b-a0b0-f0741243c589","role":"ROLE_USER","parts":[{"text":"tell me a joke"}]}}`},
		{MethodSend, `{"message":{"kind":"message","role":"user","messageId":"m1","contextId":"c1","taskId":"t1","parts":[{"kind":"text","text":"Analyze this image"},{"kind":"file","file":{"name":"input_image.png","mimeType":"image/png","bytes":"aGVsbG8="}},{"kind":"file","file":{"uri":"https://example.com/a.pdf","mimeType":"application/pdf"}},{"kind":"data","data":{"k":1}}]},"configuration":{"blocking":false,"historyLength":2,"acceptedOutputModes":["text/plain"],"pushNotificationConfig":{"url":"https://hook.example/x","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"c"}}}}`,
			a2a.MethodSendMessage, `{"message":{"messageId":"m1","contextId":"c1","taskId":"t1","role":"ROLE_USER","parts":[{"text":"Analyze this image"},{"raw":"aGVsbG8=","mediaType":"image/png","filename":"input_image.png"},{"url":"https://example.com/a.pdf","mediaType":"application/pdf"},{"data":{"k":1}}]},"configuration":{"acceptedOutputModes":["text/plain"],"historyLength":2,"returnImmediately":true,"taskPushNotificationConfig":{"url":"https://hook.example/x","token":"tok","authentication":{"scheme":"Bearer","credentials":"c"}}}}`},
		{MethodStream, `{"message":{"role":"agent","parts":[{"kind":"text","text":"x"}],"messageId":"m"},"configuration":{"blocking":true}}`,
			a2a.MethodSendStreamingMessage, `{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]},"configuration":{}}`},
		{MethodGet, `{"id":"363422be-b0f9-4692-a24d-278670e7c7f1","historyLength":5}`, a2a.MethodGetTask, `{"id":"363422be-b0f9-4692-a24d-278670e7c7f1","historyLength":5}`},
		{MethodCancel, `{"id":"t1","metadata":{"why":"bored"}}`, a2a.MethodCancelTask, `{"id":"t1","metadata":{"why":"bored"}}`},
		{MethodResubscribe, `{"id":"t1"}`, a2a.MethodSubscribeToTask, `{"id":"t1"}`},
		{MethodPushSet, `{"taskId":"t1","pushNotificationConfig":{"url":"https://client.example.com/webhook/a2a-notifications","token":"secure-client-token-for-task-aaa","authentication":{"schemes":["Bearer"]}}}`,
			a2a.MethodCreatePushConfig, `{"id":"t1","taskId":"t1","url":"https://client.example.com/webhook/a2a-notifications","token":"secure-client-token-for-task-aaa","authentication":{"scheme":"Bearer"}}`},
		{MethodPushSet, `{"taskId":"t1","pushNotificationConfig":{"id":"c9","url":"https://h/"}}`, a2a.MethodCreatePushConfig, `{"id":"c9","taskId":"t1","url":"https://h/"}`},
		{MethodPushGet, `{"id":"t1","pushNotificationConfigId":"c9"}`, a2a.MethodGetPushConfig, `{"taskId":"t1","id":"c9"}`},
		{MethodPushGet, `{"id":"t1"}`, a2a.MethodGetPushConfig, `{"taskId":"t1","id":"t1"}`},
		{MethodPushList, `{"id":"t1"}`, a2a.MethodListPushConfigs, `{"taskId":"t1"}`},
		{MethodPushDelete, `{"id":"t1","pushNotificationConfigId":"c9"}`, a2a.MethodDeletePushConfig, `{"taskId":"t1","id":"c9"}`},
		{MethodAuthenticatedCard, ``, a2a.MethodGetExtendedAgentCard, `{}`},
	}
	for _, c := range cases {
		t.Run(c.method, func(t *testing.T) {
			m10, ok := Method10(c.method)
			if !ok || m10 != c.want10 {
				t.Fatalf("Method10(%s) = %s %v, want %s", c.method, m10, ok, c.want10)
			}
			if Method03(m10) != c.method {
				t.Errorf("Method03(%s) = %s", m10, Method03(m10))
			}
			got, err := ParamsTo10(c.method, json.RawMessage(c.params))
			if err != nil {
				t.Fatalf("ParamsTo10: %v", err)
			}
			jsonEq(t, json.RawMessage(got), c.wantParams)
		})
	}
	if _, ok := Method10("SendMessage"); ok {
		t.Error("a 1.0 method name was taken for a 0.3 one")
	}
}

// TestParamsTo10Errors: params the 0.3 schema refuses are InvalidParams
// errors naming the field.
func TestParamsTo10Errors(t *testing.T) {
	cases := []struct{ method, params, field string }{
		{MethodSend, `[]`, "params"},
		{MethodSend, `{"message":{"role":"user","messageId":"m","parts":[{"kind":"file","file":{}}]}}`, "message.parts[0]"},
		{MethodSend, `{"message":{"role":"user","messageId":"m","parts":[{"kind":"file","file":{"bytes":"!!"}}]}}`, "message.parts[0]"},
		{MethodSend, `{"message":{"role":"user","messageId":"m","parts":[{"text":"no kind"}]}}`, "message.parts[0]"},
		{MethodSend, `{"message":{"role":"user","messageId":"m","parts":[{"kind":"file","file":{"bytes":"aA==","uri":"https://x/"}}]}}`, "message.parts[0]"},
		{MethodGet, `{"id":5}`, "id"},
	}
	for _, c := range cases {
		_, err := ParamsTo10(c.method, json.RawMessage(c.params))
		ae, ok := err.(*a2a.Error)
		if !ok || ae.Code != a2a.CodeInvalidParams {
			t.Errorf("%s %s: %v, want InvalidParams", c.method, c.params, err)
			continue
		}
		if b, _ := json.Marshal(ae.Details()); !json.Valid(b) || !strings.Contains(string(b), c.field) {
			t.Errorf("%s %s: details %s do not name %s", c.method, c.params, b, c.field)
		}
	}
}

func text(s string) a2a.Part { return a2a.TextPart(s) }

// TestResult03 renders 1.0 results (the examples of the 1.0 spec) the way
// a 0.3 client reads them (the 0.3 spec's response examples).
func TestResult03(t *testing.T) {
	task := &a2a.Task{ID: "363422be", ContextID: "c295ea44", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Timestamp: "2025-07-01T00:00:00.000Z"},
		Artifacts: []a2a.Artifact{{ArtifactID: "9b6934dd", Name: "joke", Parts: []a2a.Part{text("Why did the chicken cross the road? To get to the other side!")}}},
		History:   []a2a.Message{{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{text("tell me a joke")}, ContextID: "c295ea44", TaskID: "363422be"}}}
	cases := []struct {
		name, m10 string
		res       any
		want      string
	}{
		{"send task", a2a.MethodSendMessage, &a2a.SendMessageResponse{Task: task},
			`{"kind":"task","id":"363422be","contextId":"c295ea44","status":{"state":"completed","timestamp":"2025-07-01T00:00:00.000Z"},"artifacts":[{"artifactId":"9b6934dd","name":"joke","parts":[{"kind":"text","text":"Why did the chicken cross the road? To get to the other side!"}]}],"history":[{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"tell me a joke"}],"contextId":"c295ea44","taskId":"363422be"}]}`},
		{"send message", a2a.MethodSendMessage, &a2a.SendMessageResponse{Message: &a2a.Message{MessageID: "m2", Role: a2a.RoleAgent, Parts: []a2a.Part{{Raw: []byte("hi"), MediaType: "text/plain", Filename: "a.txt"}, {URL: "https://x/y.png", MediaType: "image/png"}, {Data: json.RawMessage(`{"a":1}`)}}}},
			`{"kind":"message","messageId":"m2","role":"agent","parts":[{"kind":"file","file":{"name":"a.txt","mimeType":"text/plain","bytes":"aGk="}},{"kind":"file","file":{"mimeType":"image/png","uri":"https://x/y.png"}},{"kind":"data","data":{"a":1}}]}`},
		{"get", a2a.MethodGetTask, &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}},
			`{"kind":"task","id":"t","contextId":"c","status":{"state":"input-required"}}`},
		{"push", a2a.MethodCreatePushConfig, &a2a.TaskPushNotificationConfig{ID: "c9", TaskID: "t", URL: "https://h/", Token: "tok", Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "s"}},
			`{"taskId":"t","pushNotificationConfig":{"id":"c9","url":"https://h/","token":"tok","authentication":{"schemes":["Bearer"],"credentials":"s"}}}`},
		{"push list", a2a.MethodListPushConfigs, &a2a.ListTaskPushNotificationConfigsResponse{Configs: []a2a.TaskPushNotificationConfig{{ID: "a", TaskID: "t", URL: "https://h/"}}},
			`[{"taskId":"t","pushNotificationConfig":{"id":"a","url":"https://h/"}}]`},
		{"push delete", a2a.MethodDeletePushConfig, &struct{}{}, `null`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { jsonEq(t, Result03(c.m10, c.res), c.want) })
	}
}

// TestEvents both ways: 1.0 stream events as 0.3 events (final on a
// terminal or interrupted state) and back.
func TestEvents(t *testing.T) {
	cases := []struct {
		name  string
		ev    a2a.StreamResponse
		want  string
		final bool
	}{
		{"working", a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}},
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false}`, false},
		{"input required", a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired}}},
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"input-required"},"final":true}`, true},
		{"canceled", a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCanceled}}},
			`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"canceled"},"final":true}`, true},
		{"artifact", a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{text("<section 1...>")}}, Append: true, LastChunk: true}},
			`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","parts":[{"kind":"text","text":"<section 1...>"}]},"append":true,"lastChunk":true}`, false},
		{"task", a2a.StreamResponse{Task: &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
			`{"kind":"task","id":"t","contextId":"c","status":{"state":"submitted"}}`, false},
		{"message", a2a.StreamResponse{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleAgent, Parts: []a2a.Part{text("hi")}}},
			`{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"text","text":"hi"}]}`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Event03(c.ev)
			jsonEq(t, v, c.want)
			back, final, err := Event10(json.RawMessage(c.want))
			if err != nil {
				t.Fatalf("Event10: %v", err)
			}
			if final != c.final {
				t.Errorf("final = %v, want %v", final, c.final)
			}
			if b1, b2 := mustJSON(back), mustJSON(c.ev); b1 != b2 {
				t.Errorf("round trip: %s, want %s", b1, b2)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"kind":"nope"}`, `{"kind":"task","status":{"state":"working","message":{"kind":"message","role":"agent","messageId":"m","parts":[{"kind":"zip"}]}}}`} {
		if _, _, err := Event10(json.RawMessage(bad)); err == nil {
			t.Errorf("Event10(%s): no error", bad)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestStates maps every state both ways.
func TestStates(t *testing.T) {
	for s10, s03 := range states {
		if State03(s10) != s03 || State10(s03) != s10 {
			t.Errorf("%s ↔ %s", s10, s03)
		}
	}
	if State03("BOGUS") != "unknown" || State10("bogus") != a2a.TaskStateUnspecified {
		t.Error("unknown states")
	}
	if State03(a2a.TaskStateInputRequired) != "input-required" || State03(a2a.TaskStateAuthRequired) != "auth-required" {
		t.Error("kebab-case states")
	}
}

// TestSendParams03 translates a 1.0 request for a 0.3 upstream (TURN-9)
// and back.
func TestSendParams03(t *testing.T) {
	n := int32(3)
	req := &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", ContextID: "c", Role: a2a.RoleUser, Parts: []a2a.Part{text("hi")}},
		Configuration: &a2a.SendMessageConfiguration{HistoryLength: &n, ReturnImmediately: true}}
	p := SendParams03(req)
	jsonEq(t, p, `{"message":{"kind":"message","messageId":"m","contextId":"c","role":"user","parts":[{"kind":"text","text":"hi"}]},"configuration":{"blocking":false,"historyLength":3}}`)
	back, err := SendParams10(p)
	if err != nil || mustJSON(back) != mustJSON(req) {
		t.Errorf("round trip: %s %v, want %s", mustJSON(back), err, mustJSON(req))
	}
}

// TestCards: the dual card (RPC-2) keeps the 1.0 members and adds the 0.3
// ones; a 0.3 card is read as a 1.0 card with 0.3 interfaces.
func TestCards(t *testing.T) {
	c := &a2a.AgentCard{Name: "a", Description: "d", Version: "1.0.0",
		SupportedInterfaces:  []a2a.AgentInterface{{URL: "https://h/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"}, {URL: "https://h/", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"}},
		Capabilities:         a2a.AgentCapabilities{Streaming: a2a.Bool(true), ExtendedAgentCard: a2a.Bool(true)},
		SecuritySchemes:      map[string]a2a.SecurityScheme{"bearer": {HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}}},
		SecurityRequirements: []a2a.SecurityRequirement{{Schemes: map[string]a2a.StringList{"bearer": {List: []string{}}}}},
		DefaultInputModes:    []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Skills: []a2a.AgentSkill{{ID: "s", Name: "S", Description: "sd", Tags: []string{"t"}}}}
	plain := Card03(c)
	jsonEq(t, plain, `{"protocolVersion":"0.3.0","name":"a","description":"d","url":"https://h/","preferredTransport":"JSONRPC","additionalInterfaces":[{"url":"https://h/","transport":"JSONRPC"}],"version":"1.0.0","capabilities":{"streaming":true},"securitySchemes":{"bearer":{"type":"http","scheme":"bearer"}},"security":[{"bearer":[]}],"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[{"id":"s","name":"S","description":"sd","tags":["t"]}],"supportsAuthenticatedExtendedCard":true}`)

	dual := *c
	dual.SupportedInterfaces = append([]a2a.AgentInterface(nil), c.SupportedInterfaces...)
	AddDual(&dual)
	if dual.URL != "https://h/" || dual.PreferredTransport != "JSONRPC" || dual.ProtocolVersion != "0.3.0" ||
		len(dual.AdditionalInterfaces) != 1 || dual.SupportsAuthenticatedExtendedCard == nil || len(dual.SupportedInterfaces) != 3 ||
		dual.SupportedInterfaces[2].ProtocolVersion != "0.3" || dual.SupportedInterfaces[0].ProtocolVersion != "1.0" {
		t.Errorf("dual card: %s", mustJSON(&dual))
	}

	raw := json.RawMessage(mustJSON(plain))
	if !IsCard03(raw) || IsCard03(json.RawMessage(mustJSON(c))) || IsCard03(json.RawMessage(mustJSON(&dual))) {
		t.Error("IsCard03")
	}
	back := Card10(plain)
	if len(back.SupportedInterfaces) != 1 || back.SupportedInterfaces[0].ProtocolVersion != "0.3" || back.SupportedInterfaces[0].URL != "https://h/" ||
		len(back.Skills) != 1 || back.Skills[0].ID != "s" || back.Capabilities.ExtendedAgentCard == nil {
		t.Errorf("Card10: %s", mustJSON(back))
	}
}

// TestPushMarks: the 0.3 mark on a sealed token, and 0.3 push payloads.
func TestPushMarks(t *testing.T) {
	for _, tok := range []string{"", "abc"} {
		c := a2a.TaskPushNotificationConfig{Token: tok, Legacy: true}
		got, legacy := a2a.OpenedToken(c.TokenToSeal())
		if got != tok || !legacy {
			t.Errorf("OpenedToken(TokenToSeal(%q)) = %q %v", tok, got, legacy)
		}
		if got, legacy := a2a.OpenedToken(tok); got != tok || legacy {
			t.Errorf("OpenedToken(%q) = %q %v", tok, got, legacy)
		}
	}
	cases := []struct{ in, want string }{
		{`{"task":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`, `{"kind":"task","id":"t","contextId":"c","status":{"state":"completed"}}`},
		{`{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_INPUT_REQUIRED"}}}`, `{"kind":"task","id":"t","contextId":"c","status":{"state":"input-required"}}`},
		{`not json`, `"not json"`},
	}
	for _, c := range cases {
		got := PushPayload03([]byte(c.in))
		if c.in == "not json" {
			if string(got) != c.in {
				t.Errorf("bad payload changed: %s", got)
			}
			continue
		}
		jsonEq(t, json.RawMessage(got), c.want)
	}
}
