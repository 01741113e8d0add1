package agent

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestProtoJSONOverBindings: snake_case requests over JSON-RPC and REST
// against a real service (RPC-14).
func TestProtoJSONOverBindings(t *testing.T) {
	e, _ := newPushEnv(t)
	var res a2a.SendMessageResponse
	e.result("", a2a.MethodSendMessage, json.RawMessage(`{"message":{"message_id":"pj-1","context_id":"pj-ctx","role":1,
		"parts":[{"text":"snake","media_type":"text/plain"}],"metadata":{"user_key":"v"}},"configuration":{"history_length":0}}`), &res)
	if res.Task == nil || res.Task.ContextID != "pj-ctx" || len(res.Task.History) != 0 {
		t.Fatalf("snake SendMessage: %s", mustJSON(res))
	}
	id := res.Task.ID
	var got a2a.Task
	e.result("", a2a.MethodGetTask, json.RawMessage(`{"id":"`+id+`","history_length":0}`), &got)
	if got.ID != id || len(got.History) != 0 {
		t.Errorf("GetTask history_length 0: %s", mustJSON(got))
	}
	e.result("", a2a.MethodGetTask, json.RawMessage(`{"id":"`+id+`"}`), &got)
	if len(got.History) != 2 || got.History[0].MessageID != "pj-1" || got.History[0].Metadata["user_key"] != "v" {
		t.Errorf("GetTask full history: %s", mustJSON(got))
	}
	hr := e.rest("GET", "/tasks/"+id+"?history_length=0", nil, "", nil)
	if bytes.Contains(hr.body, []byte(`"history"`)) {
		t.Errorf("REST history_length=0: %s", hr.body)
	}
	var cfg a2a.TaskPushNotificationConfig
	e.result("", a2a.MethodCreatePushConfig, json.RawMessage(`{"task_id":"`+id+`","url":"http://127.0.0.1:9/hook",
		"authentication":{"scheme":"Bearer","credentials":"secret"}}`), &cfg)
	if cfg.TaskID != id || cfg.ID == "" {
		t.Errorf("CreateTaskPushNotificationConfig task_id: %s", mustJSON(cfg))
	}
	var list a2a.ListTaskPushNotificationConfigsResponse
	e.rest("GET", "/tasks/"+id+"/pushNotificationConfigs?page_size=1", nil, "", &list)
	if len(list.Configs) != 1 {
		t.Errorf("REST page_size=1: %s", mustJSON(list))
	}
	var lt a2a.ListTasksResponse
	e.rest("GET", "/tasks?context_id=pj-ctx&status=6&history_length=0", nil, "", &lt)
	if len(lt.Tasks) != 1 || lt.Tasks[0].ID != id || len(lt.Tasks[0].History) != 0 {
		t.Errorf("REST ListTasks snake query: %s", mustJSON(lt))
	}
	re := e.restError("GET", "/tasks/"+id+"?history_length=0&historyLength=1", nil, restHeaders(""), 400, "INVALID_PARAMS")
	checkBadRequestField(t, re.Error.Details, "historyLength")
	rpcErr := e.rpcError("", a2a.MethodCreatePushConfig, json.RawMessage(`{"taskId":"`+id+`","task_id":"`+id+`","url":"http://127.0.0.1:9/h"}`), a2a.CodeInvalidParams)
	checkBadRequestField(t, rpcErr.Data, "taskId")
}

// TestContentTypeNotSupportedBindings: an unsupported part media type is
// -32005 on JSON-RPC and 415 on HTTP+JSON, for text, raw, data and url
// parts; HTTP+JSON answers are application/json (RPC-15).
func TestContentTypeNotSupportedBindings(t *testing.T) {
	e := newTestEnv(t, Config{})
	const odd = "application/x-unsupported-tck-type"
	parts := []map[string]any{
		{"text": "x", "mediaType": odd},
		{"raw": "dGNr", "mediaType": odd},
		{"data": map[string]any{"a": 1}, "mediaType": odd},
		{"url": "https://example.com/f.bin", "mediaType": odd},
		{"url": "file:///etc/hostname", "mediaType": odd},
	}
	for _, p := range parts {
		params := map[string]any{"message": map[string]any{"messageId": "ct-" + mustJSON(p), "role": "ROLE_USER", "parts": []any{p}}}
		re := e.rpcError("", a2a.MethodSendMessage, params, a2a.CodeContentTypeNotSupported)
		checkErrorInfo(t, re.Data, "CONTENT_TYPE_NOT_SUPPORTED")
		rr := e.restError("POST", "/message:send", []byte(mustJSON(params)), restJSON(""), 415, "CONTENT_TYPE_NOT_SUPPORTED")
		if rr.Error.Status != "INVALID_ARGUMENT" {
			t.Errorf("%v: status %q", p, rr.Error.Status)
		}
	}
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{odd}}
	e.restError("POST", "/message:send", []byte(mustJSON(req)), restJSON(""), 415, "CONTENT_TYPE_NOT_SUPPORTED")

	// Success answers are application/json too; both request types work.
	for _, ct := range []string{"application/json", "application/a2a+json", "application/json; charset=utf-8", "application/a2a+json;charset=utf-8"} {
		h := restHeaders("")
		h.Set("Content-Type", ct)
		hr := e.do("POST", "/message:send", []byte(mustJSON(sendReq(msg("ct")))), h)
		if hr.status != 200 || hr.header.Get("Content-Type") != "application/json" {
			t.Errorf("request %q: HTTP %d Content-Type %q", ct, hr.status, hr.header.Get("Content-Type"))
		}
	}
}
