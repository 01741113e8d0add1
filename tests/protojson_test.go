package tests

// End-to-end tests of the ProtoJSON input rules (RPC-14: proto field names
// besides the JSON names, enum numbers) and of media types and content
// types (RPC-15: ContentTypeNotSupportedError -32005 / HTTP 415, HTTP+JSON
// answers as application/json) over the built binary.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// pjSite runs a slow echo (about 1.5 s per turn, so that returnImmediately
// is visible) with push notifications on.
const pjSite = `a2a {
	card {
		name protojson-test
	}
	backend echo {
		delay 300ms
		chunks 5
	}
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
		max_attempts 1
	}
}`

// pjReason returns the ErrorInfo reason and the BadRequest fields of an
// error's details (JSON-RPC data or google.rpc.Status details).
func pjReason(details any) (string, []string) {
	list, _ := details.([]any)
	reason, fields := "", []string(nil)
	for _, d := range list {
		m, _ := d.(map[string]any)
		switch m["@type"] {
		case "type.googleapis.com/google.rpc.ErrorInfo":
			reason, _ = m["reason"].(string)
		case "type.googleapis.com/google.rpc.BadRequest":
			vs, _ := m["fieldViolations"].([]any)
			for _, v := range vs {
				if fv, ok := v.(map[string]any); ok {
					f, _ := fv["field"].(string)
					fields = append(fields, f)
				}
			}
		}
	}
	return reason, fields
}

// TestProtoJSONFieldNames: a client generated from the proto sends proto
// field names and enum numbers; the gateway reads them over JSON-RPC and
// HTTP+JSON and answers with JSON names (RPC-14).
func TestProtoJSONFieldNames(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, pjSite)
	ctxID := fmt.Sprintf("pj-ctx-%d", time.Now().UnixNano())

	// SendMessage with message_id, context_id, role 1, media_type and
	// return_immediately: the slow turn is still running when it answers.
	res, rerr := harness.At(gw.URL).RPC(t, "SendMessage", json.RawMessage(`{"message":{"message_id":"pj-m1","context_id":"`+ctxID+`","role":1,
		"parts":[{"text":"snake case","media_type":"text/plain"}],"metadata":{"user_key":{"nested_key":"v"}}},
		"configuration":{"return_immediately":true,"accepted_output_modes":["text/plain"]}}`))
	if rerr != nil {
		t.Fatalf("snake SendMessage: %v", rerr)
	}
	task, _ := res["task"].(map[string]any)
	if task == nil || task["contextId"] != ctxID {
		t.Fatalf("snake SendMessage: context_id not applied: %v", res)
	}
	st, _ := task["status"].(map[string]any)
	if s := st["state"]; s != "TASK_STATE_SUBMITTED" && s != "TASK_STATE_WORKING" {
		t.Fatalf("return_immediately ignored: state %v", s)
	}
	id, _ := task["id"].(string)

	// An inline push config, all in proto names (configuration →
	// task_push_notification_config → authentication).
	res, rerr = harness.At(gw.URL).RPC(t, "SendMessage", json.RawMessage(`{"message":{"message_id":"pj-m2","role":"ROLE_USER","parts":[{"text":"x"}]},
		"configuration":{"return_immediately":true,"task_push_notification_config":{"url":"http://127.0.0.1:9/inline","token":"tok",
		"authentication":{"scheme":"Bearer","credentials":"c"}}}}`))
	if rerr != nil {
		t.Fatalf("snake inline push config: %v", rerr)
	}
	inline, _ := res["task"].(map[string]any)
	got, rerr := harness.At(gw.URL).RPC(t, "GetTaskPushNotificationConfig", json.RawMessage(fmt.Sprintf(`{"task_id":%q,"id":%q}`, inline["id"], inline["id"])))
	if rerr != nil || got["url"] != "http://127.0.0.1:9/inline" || got["token"] != "tok" {
		t.Fatalf("inline config read back: %v %v", got, rerr)
	}

	// CreateTaskPushNotificationConfig with task_id.
	cfg, rerr := harness.At(gw.URL).RPC(t, "CreateTaskPushNotificationConfig", json.RawMessage(`{"task_id":"`+id+`","url":"http://127.0.0.1:9/hook"}`))
	if rerr != nil || cfg["taskId"] != id || cfg["id"] == "" {
		t.Fatalf("CreateTaskPushNotificationConfig task_id: %v %v", cfg, rerr)
	}
	list, rerr := harness.At(gw.URL).RPC(t, "ListTaskPushNotificationConfigs", json.RawMessage(`{"task_id":"`+id+`","page_size":10}`))
	if cs, _ := list["configs"].([]any); rerr != nil || len(cs) != 1 {
		t.Fatalf("ListTaskPushNotificationConfigs task_id: %v %v", list, rerr)
	}

	// Wait for the turn's end (state number 6 = TASK_STATE_INPUT_REQUIRED
	// in the ListTasks filter).
	deadline := time.Now().Add(15 * time.Second)
	for {
		lt, rerr := harness.At(gw.URL).RPC(t, "ListTasks", json.RawMessage(`{"context_id":"`+ctxID+`","status":6,"history_length":0,"include_artifacts":false}`))
		if rerr != nil {
			t.Fatalf("ListTasks snake: %v", rerr)
		}
		if ts, _ := lt["tasks"].([]any); len(ts) == 1 {
			if h, ok := ts[0].(map[string]any)["history"]; ok {
				t.Fatalf("ListTasks history_length 0 returned history %v", h)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task never listed as input-required: %v", lt)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// GetTask history_length 0: no history; without it, the history holds
	// the client message (metadata keys as sent) and the answer.
	full, rerr := harness.At(gw.URL).RPC(t, "GetTask", json.RawMessage(`{"id":"`+id+`"}`))
	hist, _ := full["history"].([]any)
	if rerr != nil || len(hist) < 2 {
		t.Fatalf("GetTask: %v %v", full, rerr)
	}
	first, _ := hist[0].(map[string]any)
	md, _ := first["metadata"].(map[string]any)
	uk, _ := md["user_key"].(map[string]any)
	if first["messageId"] != "pj-m1" || first["role"] != "ROLE_USER" || uk["nested_key"] != "v" {
		t.Errorf("stored message: %v", first)
	}
	none, rerr := harness.At(gw.URL).RPC(t, "GetTask", json.RawMessage(`{"id":"`+id+`","history_length":0}`))
	if rerr != nil || none["id"] != id {
		t.Fatalf("GetTask history_length 0: %v %v", none, rerr)
	}
	if h, ok := none["history"]; ok {
		t.Errorf("GetTask history_length 0 returned history %v", h)
	}
	r := harness.At(gw.URL+"/tasks/"+id+"?history_length=0").Do(t, "GET", "")
	if r.StatusCode != 200 || bytes.Contains(r.Raw, []byte(`"history"`)) || !bytes.Contains(r.Raw, []byte(`"contextId"`)) {
		t.Errorf("REST GET ?history_length=0: %d %s", r.StatusCode, r.Raw)
	}
	r = harness.At(gw.URL+"/tasks?context_id="+ctxID+"&page_size=1&history_length=1").Do(t, "GET", "")
	var lr struct {
		Tasks []struct {
			ID      string `json:"id"`
			History []any  `json:"history"`
		} `json:"tasks"`
	}
	if err := json.Unmarshal(r.Raw, &lr); err != nil || r.StatusCode != 200 || len(lr.Tasks) != 1 || lr.Tasks[0].ID != id || len(lr.Tasks[0].History) != 1 {
		t.Errorf("REST GET /tasks snake query: %d %s", r.StatusCode, r.Raw)
	}

	// Both spellings of one field: invalid params naming the field.
	_, rerr = harness.At(gw.URL).RPC(t, "GetTask", json.RawMessage(`{"id":"`+id+`","historyLength":1,"history_length":0}`))
	if reason, fields := pjReason(rerr["data"]); rerr["code"] != float64(-32602) || reason != "INVALID_PARAMS" || len(fields) != 1 || fields[0] != "historyLength" {
		t.Errorf("both spellings: %v", rerr)
	}
	_, rerr = harness.At(gw.URL).RPC(t, "SendMessage", json.RawMessage(`{"message":{"messageId":"a","message_id":"b","role":1,"parts":[{"text":"x"}]}}`))
	if _, fields := pjReason(rerr["data"]); len(fields) != 1 || fields[0] != "message.messageId" {
		t.Errorf("both spellings in the message: %v", rerr)
	}
}

// TestContentTypes: unsupported part media types and output modes are
// ContentTypeNotSupportedError (-32005 on JSON-RPC, 415 on HTTP+JSON);
// HTTP+JSON answers application/json and takes either JSON type (RPC-15).
func TestContentTypes(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, "a2a {"+cardBlock+"}")
	const odd = "application/x-unsupported-tck-type"
	parts := []string{
		`{"raw":"dGNr","mediaType":"` + odd + `"}`,
		`{"url":"https://example.com/f.bin","mediaType":"` + odd + `"}`,
		`{"text":"x","mediaType":"` + odd + `"}`,
		`{"data":{"a":1},"media_type":"` + odd + `"}`,
	}
	for i, p := range parts {
		params := fmt.Sprintf(`{"message":{"messageId":"ct-%d","role":"ROLE_USER","parts":[%s]}}`, i, p)
		_, rerr := harness.At(gw.URL).RPC(t, "SendMessage", json.RawMessage(params))
		if reason, _ := pjReason(rerr["data"]); rerr["code"] != float64(-32005) || reason != "CONTENT_TYPE_NOT_SUPPORTED" {
			t.Errorf("JSON-RPC part %s: %v", p, rerr)
		}
		r := harness.At(gw.URL+"/message:send").Do(t, http.MethodPost, params)
		var body struct {
			Error struct {
				Code    int    `json:"code"`
				Status  string `json:"status"`
				Details any    `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Raw, &body)
		reason, _ := pjReason(body.Error.Details)
		if r.StatusCode != http.StatusUnsupportedMediaType || body.Error.Code != 415 || reason != "CONTENT_TYPE_NOT_SUPPORTED" || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("REST part %s: %d %q %s", p, r.StatusCode, r.Header.Get("Content-Type"), r.Raw)
		}
	}
	// Output modes the agent cannot produce.
	params := `{"message":{"messageId":"ct-out","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"accepted_output_modes":["image/png"]}}`
	if _, rerr := harness.At(gw.URL).RPC(t, "SendMessage", json.RawMessage(params)); rerr["code"] != float64(-32005) {
		t.Errorf("JSON-RPC acceptedOutputModes: %v", rerr)
	}
	if r := harness.At(gw.URL+"/message:send").Do(t, http.MethodPost, params); r.StatusCode != 415 {
		t.Errorf("REST acceptedOutputModes: %d %s", r.StatusCode, r.Raw)
	}

	// Success and error answers are application/json; requests may be
	// application/json or application/a2a+json, with parameters.
	var id string
	for i, ct := range []string{"application/json", "application/a2a+json", "application/json; charset=utf-8", "application/a2a+json; charset=utf-8"} {
		r := harness.At(gw.URL+"/message:send").Do(t, http.MethodPost, fmt.Sprintf(`{"message":{"messageId":"ok-%d","role":"ROLE_USER","parts":[{"text":"hi"}]}}`, i), harness.Header("Content-Type", ct))
		var res struct {
			Task struct {
				ID string `json:"id"`
			} `json:"task"`
		}
		if err := json.Unmarshal(r.Raw, &res); err != nil || r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" || res.Task.ID == "" {
			t.Errorf("request Content-Type %q: %d %q %s", ct, r.StatusCode, r.Header.Get("Content-Type"), r.Raw)
		}
		id = res.Task.ID
	}
	if r := harness.At(gw.URL+"/tasks/"+id).Do(t, "GET", ""); r.StatusCode != 200 || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET /tasks/{id}: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := harness.At(gw.URL+"/tasks/no-such-task").Do(t, "GET", ""); r.StatusCode != 404 || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("REST error: %d %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if r := harness.At(gw.URL+"/message:send").Do(t, http.MethodPost, `{}`, harness.Header("Content-Type", "text/plain")); r.StatusCode != 415 || r.Header.Get("Content-Type") != "application/json" { // RPC-15
		t.Errorf("REST wrong request type: %d %q %s", r.StatusCode, r.Header.Get("Content-Type"), r.Raw)
	}
	// The card keeps its registered type.
	if r := harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, "GET", ""); r.Header.Get("Content-Type") != "application/a2a+json" {
		t.Errorf("card Content-Type %q", r.Header.Get("Content-Type"))
	}
}
