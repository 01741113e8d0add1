package client

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestTransportFactory checks which transport each card interface gets
// (XPORT-1..3, CLI-1): the factory picks by the selected interface's
// binding, so no operation branches on it.
func TestTransportFactory(t *testing.T) {
	card := &a2a.AgentCard{Name: "x", SupportedInterfaces: []a2a.AgentInterface{
		{URL: "grpc.example:443", ProtocolBinding: a2a.BindingGRPC, ProtocolVersion: "1.0"},
		{URL: "wss://a.example/ws", ProtocolBinding: a2a.BindingWebSocket, ProtocolVersion: "1.0"},
		{URL: "https://a.example/rest", ProtocolBinding: a2a.BindingHTTPJSON, ProtocolVersion: "1.0"},
		{URL: "https://a.example/rpc", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
	}}
	for _, tc := range []struct {
		binding string
		want    string
	}{
		{BindingAuto, "*client.restTransport"}, // the first HTTP interface of the card
		{BindingJSONRPC, "*client.jsonrpcTransport"},
		{BindingREST, "*client.restTransport"},
		{BindingWebSocket, "*client.wsTransport"},
		{BindingGRPC, "*client.grpcTransport"},
	} {
		c, err := New(card, nil, Options{Binding: tc.binding})
		if err != nil {
			t.Fatalf("binding %q: %v", tc.binding, err)
		}
		if got := typeName(c.t); got != tc.want {
			t.Errorf("binding %q: transport %s, want %s", tc.binding, got, tc.want)
		}
		if err := c.Close(); err != nil {
			t.Errorf("binding %q: Close: %v", tc.binding, err)
		}
	}
	// A card whose only interface the client does not speak gets none.
	only := &a2a.AgentCard{Name: "x", SupportedInterfaces: []a2a.AgentInterface{{URL: "grpc.example:443", ProtocolBinding: a2a.BindingGRPC}}}
	if _, err := New(only, nil, Options{}); err == nil {
		t.Fatal("auto binding picked the GRPC interface; it is used only when forced")
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *restTransport:
		return "*client.restTransport"
	case *jsonrpcTransport:
		return "*client.jsonrpcTransport"
	case *wsTransport:
		return "*client.wsTransport"
	case *grpcTransport:
		return "*client.grpcTransport"
	}
	return "unknown"
}

// TestRESTRoute checks the HTTP+JSON rendering of each method's params
// (the routes the operations used before the Transport split).
func TestRESTRoute(t *testing.T) {
	h := int32(3)
	for _, tc := range []struct {
		method string
		params any
		verb   string
		path   string
		query  string
	}{
		{a2a.MethodSendMessage, &a2a.SendMessageRequest{}, "POST", "/message:send", ""},
		{a2a.MethodSendStreamingMessage, &a2a.SendMessageRequest{}, "POST", "/message:stream", ""},
		{a2a.MethodSubscribeToTask, a2a.SubscribeToTaskRequest{ID: "t/1"}, "POST", "/tasks/t%2F1:subscribe", ""},
		{a2a.MethodGetTask, a2a.GetTaskRequest{ID: "t1", HistoryLength: &h}, "GET", "/tasks/t1", "historyLength=3"},
		{a2a.MethodCancelTask, a2a.CancelTaskRequest{ID: "t1"}, "POST", "/tasks/t1:cancel", ""},
		{a2a.MethodCreatePushConfig, &a2a.TaskPushNotificationConfig{TaskID: "t1"}, "POST", "/tasks/t1/pushNotificationConfigs", ""},
		{a2a.MethodGetPushConfig, a2a.GetTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p"}, "GET", "/tasks/t1/pushNotificationConfigs/p", ""},
		{a2a.MethodDeletePushConfig, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: "t1", ID: "p"}, "DELETE", "/tasks/t1/pushNotificationConfigs/p", ""},
		{a2a.MethodListPushConfigs, a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t1", PageSize: 2}, "GET", "/tasks/t1/pushNotificationConfigs", "pageSize=2"},
		{a2a.MethodListTasks, &a2a.ListTasksRequest{ContextID: "c"}, "GET", "/tasks", "contextId=c"},
	} {
		rc, err := restRoute(tc.method, tc.params)
		if err != nil {
			t.Fatalf("%s: %v", tc.method, err)
		}
		if rc.verb != tc.verb || rc.path != tc.path || rc.q.Encode() != tc.query {
			t.Errorf("%s: %s %s?%s, want %s %s?%s", tc.method, rc.verb, rc.path, rc.q.Encode(), tc.verb, tc.path, tc.query)
		}
	}
	if _, err := restRoute(a2a.MethodGetTask, 42); err == nil {
		t.Error("unknown params rendered")
	}
}

// TestReasonCode checks the gRPC ErrorInfo reason lookup, the limits
// reasons included (AUTH-6: RESOURCE_EXHAUSTED used to read as internal).
func TestReasonCode(t *testing.T) {
	for reason, want := range map[string]int{
		"RESOURCE_EXHAUSTED": a2a.CodeResourceExhausted,
		"PERMISSION_DENIED":  a2a.CodePermissionDenied,
		"TASK_NOT_FOUND":     a2a.CodeTaskNotFound,
		"INTERNAL_ERROR":     a2a.CodeInternalError,
		"SOMETHING_ELSE":     a2a.CodeInternalError,
	} {
		if got := reasonCode(reason); got != want {
			t.Errorf("reasonCode(%q) = %d, want %d", reason, got, want)
		}
	}
}
