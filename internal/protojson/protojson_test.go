package protojson

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestProtoJSONNormalize covers the ProtoJSON input rule (RPC-14): proto
// field names at every nesting level, enum numbers, free-form members left
// untouched and both spellings of one field refused.
func TestProtoJSONNormalize(t *testing.T) {
	type tc struct {
		name string
		in   string
		into func() any // a fresh pointer to the target type
		want any        // the decoded value, nil when wantField is set
		// wantField is the field the invalid params error must name.
		wantField string
	}
	sendReqT := func() any { return new(a2a.SendMessageRequest) }
	str := func(s string) *string { return &s }
	cases := []tc{
		{
			name: "nested message, parts, configuration, push config authentication",
			in: `{"tenant":"t","message":{"message_id":"m1","context_id":"c1","task_id":"t1","role":1,
				"parts":[{"text":"hi","media_type":"text/plain"},{"raw":"aGk=","media_type":"image/png","filename":"a.png"},
				{"url":"file:///x","media_type":"text/markdown"}],
				"reference_task_ids":["r1"],"extensions":["urn:x"]},
				"configuration":{"accepted_output_modes":["text/plain"],"history_length":0,"return_immediately":true,
				"task_push_notification_config":{"task_id":"t1","id":"p1","url":"https://h/x","token":"tok",
				"authentication":{"scheme":"Bearer","credentials":"c"}}}}`,
			into: sendReqT,
			want: &a2a.SendMessageRequest{Tenant: "t",
				Message: &a2a.Message{MessageID: "m1", ContextID: "c1", TaskID: "t1", Role: a2a.RoleUser,
					Parts: []a2a.Part{{Text: str("hi"), MediaType: "text/plain"}, {Raw: []byte("hi"), MediaType: "image/png", Filename: "a.png"},
						{URL: "file:///x", MediaType: "text/markdown"}},
					ReferenceTaskIDs: []string{"r1"}, Extensions: []string{"urn:x"}},
				Configuration: &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"text/plain"}, HistoryLength: i32(0), ReturnImmediately: true,
					TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{TaskID: "t1", ID: "p1", URL: "https://h/x", Token: "tok",
						Authentication: &a2a.AuthenticationInfo{Scheme: "Bearer", Credentials: "c"}}}},
		},
		{
			name: "camelCase is unchanged",
			in:   `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x","mediaType":"text/plain"}]},"configuration":{"historyLength":2,"returnImmediately":true}}`,
			into: sendReqT,
			want: &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m1", Role: a2a.RoleUser, Parts: []a2a.Part{{Text: str("x"), MediaType: "text/plain"}}},
				Configuration: &a2a.SendMessageConfiguration{HistoryLength: i32(2), ReturnImmediately: true}},
		},
		{
			name: "metadata keys at every level are user data",
			in: `{"message":{"message_id":"m","role":"ROLE_USER","parts":[{"text":"x","metadata":{"media_type":"keep","a_b":{"c_d":1}}}],
				"metadata":{"task_id":"keep","iac_code":{"api_key":"k","cwd":"/w"}}},"metadata":{"context_id":{"message_id":"keep"}}}`,
			into: sendReqT,
			want: &a2a.SendMessageRequest{
				Message: &a2a.Message{MessageID: "m", Role: a2a.RoleUser,
					Parts:    []a2a.Part{{Text: str("x"), Metadata: map[string]any{"media_type": "keep", "a_b": map[string]any{"c_d": float64(1)}}}},
					Metadata: map[string]any{"task_id": "keep", "iac_code": map[string]any{"api_key": "k", "cwd": "/w"}}},
				Metadata: map[string]any{"context_id": map[string]any{"message_id": "keep"}}},
		},
		{
			name: "data payload kept byte for byte",
			in:   `{"message":{"message_id":"m","role":2,"parts":[{"data":{"task_id" : [1, 2], "<b>":"&"},"media_type":"application/json"}]}}`,
			into: sendReqT,
			want: &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m", Role: a2a.RoleAgent,
				Parts: []a2a.Part{{Data: json.RawMessage(`{"task_id" : [1, 2], "<b>":"&"}`), MediaType: "application/json"}}}},
		},
		{
			name: "get task history_length 0",
			in:   `{"id":"t1","history_length":0}`,
			into: func() any { return new(a2a.GetTaskRequest) },
			want: &a2a.GetTaskRequest{ID: "t1", HistoryLength: i32(0)},
		},
		{
			name: "list filters with a task state number",
			in: `{"context_id":"c","status":3,"page_size":5,"page_token":"p","history_length":1,
				"status_timestamp_after":"2025-01-01T00:00:00Z","include_artifacts":true}`,
			into: func() any { return new(a2a.ListTasksRequest) },
			want: &a2a.ListTasksRequest{ContextID: "c", Status: a2a.TaskStateCompleted, PageSize: i32(5), PageToken: "p", HistoryLength: i32(1),
				StatusTimestampAfter: "2025-01-01T00:00:00Z", IncludeArtifacts: func() *bool { b := true; return &b }()},
		},
		{
			name: "task state auth required by number",
			in:   `{"status":8}`,
			into: func() any { return new(a2a.ListTasksRequest) },
			want: &a2a.ListTasksRequest{Status: a2a.TaskStateAuthRequired},
		},
		{
			name: "push config methods",
			in:   `{"task_id":"t","page_size":2,"page_token":"x"}`,
			into: func() any { return new(a2a.ListTaskPushNotificationConfigsRequest) },
			want: &a2a.ListTaskPushNotificationConfigsRequest{TaskID: "t", PageSize: 2, PageToken: "x"},
		},
		{
			name: "unknown keys are still ignored",
			in:   `{"id":"t","foo_bar":{"task_id":1}}`,
			into: func() any { return new(a2a.GetTaskRequest) },
			want: &a2a.GetTaskRequest{ID: "t"},
		},
		{
			name:      "both spellings at the top",
			in:        `{"taskId":"a","task_id":"b","url":"https://h/x"}`,
			into:      func() any { return new(a2a.TaskPushNotificationConfig) },
			wantField: "taskId",
		},
		{
			name:      "both spellings in a part",
			in:        `{"message":{"messageId":"m","role":1,"parts":[{"text":"x"},{"text":"y","media_type":"text/plain","mediaType":"text/plain"}]}}`,
			into:      sendReqT,
			wantField: "message.parts[1].mediaType",
		},
		{
			name:      "both spellings in the configuration",
			in:        `{"message":{"messageId":"m","role":1,"parts":[{"text":"x"}]},"configuration":{"historyLength":1,"history_length":2}}`,
			into:      sendReqT,
			wantField: "configuration.historyLength",
		},
		{
			name:      "both spellings in the push config",
			in:        `{"message":{"messageId":"m","role":1,"parts":[{"text":"x"}]},"configuration":{"task_push_notification_config":{"url":"u"},"taskPushNotificationConfig":{"url":"v"}}}`,
			into:      sendReqT,
			wantField: "configuration.taskPushNotificationConfig",
		},
		{
			name:      "a wrong type under the proto name is named by its JSON name",
			in:        `{"id":"t","history_length":"x"}`,
			into:      func() any { return new(a2a.GetTaskRequest) },
			wantField: "historyLength",
		},
		{
			name:      "unknown enum number",
			in:        `{"status":9}`,
			into:      func() any { return new(a2a.ListTasksRequest) },
			wantField: "status",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := c.into()
			err := Decode(json.RawMessage(c.in), got)
			if c.wantField != "" {
				var ae *a2a.Error
				if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams {
					t.Fatalf("err = %v, want invalid params", err)
				}
				if len(ae.Violations) != 1 || ae.Violations[0].Field != c.wantField {
					t.Fatalf("violations %+v, want field %q", ae.Violations, c.wantField)
				}
				return
			}
			if err != nil {
				t.Fatalf("decodeParams: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %s\nwant %s", mustJSON(got), mustJSON(c.want))
			}
		})
	}
}

// TestProtoJSONNormalizeFastPath: a body without an underscore is decoded
// as sent (the same bytes), and output names stay lowerCamelCase.
func TestProtoJSONNormalizeFastPath(t *testing.T) {
	in := []byte(`{"id":"t","historyLength":1}`)
	out, err := normalizeProtoJSON(in, reflect.TypeFor[a2a.GetTaskRequest]())
	if err != nil || &out[0] != &in[0] {
		t.Fatalf("fast path copied or failed: %v", err)
	}
	out, err = normalizeProtoJSON([]byte(`{"id":"t","history_length":1}`), reflect.TypeFor[a2a.GetTaskRequest]())
	if err != nil || string(out) != `{"id":"t","historyLength":1}` {
		t.Fatalf("normalised %s, %v", out, err)
	}
	var req a2a.SendMessageRequest
	if err := Decode(json.RawMessage(`{"message":{"message_id":"m","role":1,"parts":[{"text":"x"}],"reference_task_ids":["a"]}}`), &req); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(req.Message)
	if !strings.Contains(string(b), `"messageId":"m"`) || !strings.Contains(string(b), `"role":"ROLE_USER"`) ||
		!strings.Contains(string(b), `"referenceTaskIds"`) || strings.Contains(string(b), "_id") {
		t.Errorf("output is not lowerCamelCase with enum names: %s", b)
	}
}

// FuzzProtoJSONNormalize checks the normaliser on arbitrary JSON (RPC-14):
// no panic, valid JSON out, idempotent, refusals are invalid params naming
// one field, and free-form members (metadata, data, part content) decode to
// the same values before and after.
func FuzzProtoJSONNormalize(f *testing.F) {
	seeds := []string{
		`{"message":{"message_id":"m","context_id":"c","role":1,"parts":[{"text":"x","media_type":"text/plain"},{"data":{"a_b":1},"metadata":{"c_d":2}}],"metadata":{"task_id":"k"}},"configuration":{"history_length":0,"return_immediately":true,"accepted_output_modes":["text/plain"],"task_push_notification_config":{"task_id":"t","url":"u","authentication":{"scheme":"Bearer"}}},"metadata":{"x_y":[1]}}`,
		`{"message":{"messageId":"m","message_id":"n"}}`,
		`{"message":{"parts":[{"mediaType":"a","media_type":"b"}]}}`,
		`{"message":null,"configuration":"x_y","metadata":[]}`,
		`{"message":{"parts":{"text_x":1}}}`,
		`{"message":{"parts":[null,1,"a_b",{"raw":"aGk="}]}}`,
		`{"Message":{"MESSAGE_ID":"m"},"message":{"message_id":"k"}}`,
		`{"a\u005fb":1,"message_\u0069d":2}`,
		`[{"task_id":1}]`, `"_"`, `{"_":{"_":"_"}}`, `{}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	typ := reflect.TypeFor[a2a.SendMessageRequest]()
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		out, err := normalizeProtoJSON(body, typ)
		if err != nil {
			var ae *a2a.Error
			if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams || len(ae.Violations) != 1 || ae.Violations[0].Field == "" {
				t.Fatalf("refusal is not invalid params naming a field: %v", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("output is not valid JSON: %q", out)
		}
		again, err := normalizeProtoJSON(out, typ)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q (%v)", out, again, err)
		}
		before, errB := decodeGeneric(body)
		after, errA := decodeGeneric(out)
		if errB != nil || errA != nil {
			t.Fatalf("generic decode failed: %v / %v", errB, errA)
		}
		if m, ok := dig(after, []string{"message"}).(map[string]any); ok {
			for _, k := range []string{"message_id", "context_id", "task_id", "reference_task_ids"} {
				if _, left := m[k]; left {
					t.Fatalf("message.%s was not renamed: %q", k, out)
				}
			}
		}
		for _, path := range [][]string{{"metadata"}, {"message", "metadata"}, {"message", "parts"}} {
			b, a := dig(before, path), dig(after, path)
			if path[len(path)-1] == "parts" {
				b, a = freeFormParts(b), freeFormParts(a)
			}
			if !reflect.DeepEqual(b, a) {
				t.Fatalf("%v changed: %v → %v", path, b, a)
			}
		}
	})
}

// decodeGeneric decodes JSON keeping numbers as written (any size).
func decodeGeneric(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// dig follows object keys through a generic JSON value.
func dig(v any, path []string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// freeFormParts keeps the members of each part that have no proto alias.
func freeFormParts(v any) any {
	arr, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(arr))
	for i, p := range arr {
		m, ok := p.(map[string]any)
		if !ok {
			out[i] = p
			continue
		}
		out[i] = []any{m["data"], m["metadata"], m["text"], m["raw"], m["url"], m["filename"]}
	}
	return out
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func i32(n int32) *int32 { return &n }

// TestNormalizeAllocations: a request in JSON names that the scan has to
// walk (an enum name holds an underscore) is returned as is, and the
// scan allocates only its own state, not a string per key or path.
func TestNormalizeAllocations(t *testing.T) {
	in := []byte(`{"message":{"messageId":"m1","contextId":"c1","role":"ROLE_USER","parts":[{"text":"hi","mediaType":"text/plain"},{"text":"x"}],"metadata":{"a_b":1}},"configuration":{"historyLength":2}}`)
	typ := reflect.TypeOf(new(a2a.SendMessageRequest))
	out, err := normalizeProtoJSON(in, typ)
	if err != nil || !bytes.Equal(out, in) {
		t.Fatalf("normalizeProtoJSON = %s, %v; want the input unchanged", out, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = normalizeProtoJSON(in, typ) }); n > 2 {
		t.Errorf("normalizeProtoJSON: %v allocations, want at most 2 (the scanner and its path)", n)
	}
}
