package agent

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

func TestJSONRPCEnvelopeErrors(t *testing.T) {
	e := newTestEnv(t, Config{})
	cases := []struct {
		name   string
		body   string
		code   int
		wantID string // "" = null
	}{
		{"parse error", `{"jsonrpc":"2.0","id":1,"method":"GetTask"`, a2a.CodeParseError, ""},
		{"parse error garbage", `not json at all`, a2a.CodeParseError, ""},
		{"jsonrpc missing, no id", `{"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, ""},
		{"jsonrpc 1.0, no id", `{"jsonrpc":"1.0","method":"GetTask"}`, a2a.CodeInvalidRequest, ""},
		{"jsonrpc number", `{"jsonrpc":2.0,"method":"GetTask"}`, a2a.CodeInvalidRequest, ""},
		{"method not a string", `{"jsonrpc":"2.0","method":5,"params":{}}`, a2a.CodeInvalidRequest, ""},
		{"method missing", `{"jsonrpc":"2.0","params":{}}`, a2a.CodeInvalidRequest, ""},
		{"method empty", `{"jsonrpc":"2.0","id":3,"method":""}`, a2a.CodeInvalidRequest, "3"},
		{"id an object", `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, ""},
		{"id an array", `{"jsonrpc":"2.0","id":[1],"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, ""},
		{"id a bool", `{"jsonrpc":"2.0","id":true,"method":"GetTask","params":{"id":"x"}}`, a2a.CodeInvalidRequest, ""},
		{"not an object", `"hello"`, a2a.CodeInvalidRequest, ""},
		{"number body", `42`, a2a.CodeInvalidRequest, ""},
		{"null body", `null`, a2a.CodeInvalidRequest, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":"u","method":"message/send","params":{}}`, a2a.CodeMethodNotFound, `"u"`},
		{"unknown method 2", `{"jsonrpc":"2.0","id":7,"method":"DoSomething"}`, a2a.CodeMethodNotFound, "7"},
		{"params an array", `{"jsonrpc":"2.0","id":8,"method":"GetTask","params":[1,2]}`, a2a.CodeInvalidParams, "8"},
		{"params a string", `{"jsonrpc":"2.0","id":8,"method":"GetTask","params":"x"}`, a2a.CodeInvalidParams, "8"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hr, rep := e.rawRPC(c.body, v1Headers(""))
			if ct := hr.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			if rep.Error == nil {
				t.Fatalf("no error: %s", hr.body)
			}
			if rep.Error.Code != c.code {
				t.Errorf("code %d (%q), want %d", rep.Error.Code, rep.Error.Message, c.code)
			}
			want := c.wantID
			if want == "" {
				want = "null"
			}
			if string(rep.ID) != want {
				t.Errorf("id %s, want %s", rep.ID, want)
			}
			if rep.Result != nil {
				t.Errorf("error response also has a result: %s", hr.body)
			}
			checkErrorInfo(t, rep.Error.Data, reasonOf(c.code))
		})
	}
}

func TestJSONRPCInvalidRequestWithValidID(t *testing.T) {
	// An invalid request whose id could be read: the id is echoed or null.
	e := newTestEnv(t, Config{})
	for _, body := range []string{
		`{"id":7,"method":"GetTask","params":{"id":"x"}}`,
		`{"jsonrpc":"1.0","id":7,"method":"GetTask"}`,
		`{"jsonrpc":"2.0","id":7,"method":{"x":1}}`,
	} {
		_, rep := e.rawRPC(body, v1Headers(""))
		if rep.Error == nil || rep.Error.Code != a2a.CodeInvalidRequest {
			t.Errorf("%s: %+v, want -32600", body, rep.Error)
		}
		if id := string(rep.ID); id != "7" && id != "null" {
			t.Errorf("%s: id %s, want 7 or null", body, id)
		}
	}
}

func TestJSONRPCIDsEchoed(t *testing.T) {
	e := newTestEnv(t, Config{})
	for _, id := range []string{`"abc"`, `0`, `-5`, `1.5`, `12345678901234567890`, `null`, `""`} {
		_, rep := e.rawRPC(`{"jsonrpc":"2.0","id":`+id+`,"method":"GetTask","params":{"id":"missing"}}`, v1Headers(""))
		if string(rep.ID) != id {
			t.Errorf("id %s echoed as %s", id, rep.ID)
		}
		if rep.Error == nil || rep.Error.Code != a2a.CodeTaskNotFound {
			t.Errorf("id %s: %+v", id, rep.Error)
		}
	}
}

func TestJSONRPCInvalidParamsNamesField(t *testing.T) {
	e := newTestEnv(t, Config{})
	cases := []struct {
		method string
		params string
		field  string
	}{
		{a2a.MethodSendMessage, `{"message":"hi"}`, "message"},
		{a2a.MethodSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":"x"}}`, "message.parts"},
		{a2a.MethodSendMessage, `{"message":{"messageId":5,"role":"ROLE_USER","parts":[{"text":"x"}]}}`, "message.messageId"},
		{a2a.MethodSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":"2"}}`, "configuration.historyLength"},
		{a2a.MethodSendMessage, `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"returnImmediately":"yes"}}`, "configuration.returnImmediately"},
		{a2a.MethodGetTask, `{"id":"x","historyLength":"5"}`, "historyLength"},
		{a2a.MethodGetTask, `{"id":12}`, "id"},
		{a2a.MethodListTasks, `{"pageSize":"10"}`, "pageSize"},
		{a2a.MethodListTasks, `{"includeArtifacts":"true"}`, "includeArtifacts"},
		{a2a.MethodCancelTask, `{"id":["x"]}`, "id"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.params, func(t *testing.T) {
			_, rep := e.rawRPC(`{"jsonrpc":"2.0","id":1,"method":"`+c.method+`","params":`+c.params+`}`, v1Headers(""))
			if rep.Error == nil || rep.Error.Code != a2a.CodeInvalidParams {
				t.Fatalf("got %+v, want -32602", rep.Error)
			}
			checkErrorInfo(t, rep.Error.Data, "INVALID_PARAMS")
			checkBadRequestField(t, rep.Error.Data, c.field)
		})
	}
}

func TestJSONRPCMessageDoesNotLeakInternals(t *testing.T) {
	// Decode errors must not expose Go type names.
	e := newTestEnv(t, Config{})
	_, rep := e.rawRPC(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x","raw":12}]}}}`, v1Headers(""))
	if rep.Error == nil || rep.Error.Code != a2a.CodeInvalidParams {
		t.Fatalf("got %+v", rep.Error)
	}
	for _, leak := range []string{"a2a.", "Go struct", "[]uint8", "json: cannot"} {
		if strings.Contains(rep.Error.Message, leak) {
			t.Errorf("error message leaks %q: %q", leak, rep.Error.Message)
		}
	}
}

func TestJSONRPCNotification(t *testing.T) {
	e := newTestEnv(t, Config{})
	for _, body := range []string{
		`{"jsonrpc":"2.0","method":"GetTask","params":{"id":"missing"}}`,
		`{"jsonrpc":"2.0","method":"NoSuchMethod"}`,
		`{"jsonrpc":"2.0","method":"ListTasks","params":{}}`,
	} {
		hr := e.do("POST", "/", []byte(body), v1Headers(""))
		if hr.status != http.StatusNoContent || len(hr.body) != 0 {
			t.Errorf("notification %s: HTTP %d body %q, want 204 and no body", body, hr.status, hr.body)
		}
	}
	// A SendMessage notification still runs the turn.
	hr := e.do("POST", "/", []byte(`{"jsonrpc":"2.0","method":"SendMessage","params":{"message":{"messageId":"n1","contextId":"notif","role":"ROLE_USER","parts":[{"text":"x"}]}}}`), v1Headers(""))
	if hr.status != http.StatusNoContent || len(hr.body) != 0 {
		t.Errorf("SendMessage notification: HTTP %d body %q", hr.status, hr.body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, _ := e.list("", map[string]any{"contextId": "notif"})
		if len(res.Tasks) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("notification SendMessage created no task")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestJSONRPCStreamingNotificationGetsNoBody(t *testing.T) {
	// JSON-RPC 2.0: the server MUST NOT reply to a notification, streaming
	// methods included.
	e := newTestEnv(t, Config{})
	hr := e.do("POST", "/", []byte(`{"jsonrpc":"2.0","method":"SendStreamingMessage","params":{"message":{"messageId":"n2","role":"ROLE_USER","parts":[{"text":"x"}]}}}`), v1Headers(""))
	if hr.status != http.StatusNoContent || len(hr.body) != 0 {
		t.Errorf("SendStreamingMessage notification: HTTP %d Content-Type %q body %q; want 204 and no body",
			hr.status, hr.header.Get("Content-Type"), trunc(string(hr.body)))
	}
}

func TestJSONRPCBatch(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("batched")))
	body := `[
		{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"` + task.ID + `"}},
		{"jsonrpc":"2.0","method":"GetTask","params":{"id":"` + task.ID + `"}},
		{"jsonrpc":"2.0","id":"two","method":"GetTask","params":{"id":"missing"}},
		{"jsonrpc":"2.0","id":3,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]}}},
		{"jsonrpc":"2.0","id":4,"method":"SubscribeToTask","params":{"id":"` + task.ID + `"}},
		{"foo":"bar"},
		5,
		{"jsonrpc":"2.0","id":6,"method":"ListTasks","params":{}}
	]`
	hr := e.do("POST", "/", []byte(body), v1Headers(""))
	if hr.status != http.StatusOK || !strings.HasPrefix(hr.header.Get("Content-Type"), "application/json") {
		t.Fatalf("batch: HTTP %d %q", hr.status, hr.header.Get("Content-Type"))
	}
	var reps []rpcReply
	if err := json.Unmarshal(hr.body, &reps); err != nil {
		t.Fatalf("batch answer is not an array: %v: %s", err, hr.body)
	}
	byID := map[string]rpcReply{}
	nulls := 0
	for _, r := range reps {
		if r.JSONRPC != "2.0" {
			t.Errorf("batch item jsonrpc %q", r.JSONRPC)
		}
		if string(r.ID) == "null" {
			nulls++
			if r.Error == nil || r.Error.Code != a2a.CodeInvalidRequest {
				t.Errorf("null-id item: %+v, want -32600", r.Error)
			}
			continue
		}
		byID[string(r.ID)] = r
	}
	if len(reps) != 7 {
		t.Errorf("batch of 8 with 1 notification: %d responses, want 7: %s", len(reps), hr.body)
	}
	if nulls != 2 {
		t.Errorf("%d null-id responses, want 2 (the invalid items)", nulls)
	}
	if r := byID["1"]; r.Error != nil || !strings.Contains(string(r.Result), task.ID) {
		t.Errorf("item 1: %+v %s", r.Error, r.Result)
	}
	if r := byID[`"two"`]; r.Error == nil || r.Error.Code != a2a.CodeTaskNotFound {
		t.Errorf("item two: %+v", r.Error)
	}
	for _, id := range []string{"3", "4"} {
		r := byID[id]
		if r.Error == nil {
			t.Errorf("streaming item %s in a batch was not refused: %s", id, r.Result)
		} else {
			checkErrorInfo(t, r.Error.Data, "")
		}
	}
	if r := byID["6"]; r.Error != nil || !strings.Contains(string(r.Result), `"tasks"`) {
		t.Errorf("item 6: %+v %s", r.Error, r.Result)
	}

	// The refused streaming SendMessage created no task.
	res, _ := e.list("", map[string]any{})
	if len(res.Tasks) != 1 {
		t.Errorf("%d tasks after the batch, want 1 (streaming items must not run)", len(res.Tasks))
	}
}

func TestJSONRPCBatchEdgeCases(t *testing.T) {
	e := newTestEnv(t, Config{})
	// Empty batch: one Invalid Request response, not an array.
	_, rep := e.rawRPC(`[]`, v1Headers(""))
	if rep.Error == nil || rep.Error.Code != a2a.CodeInvalidRequest || string(rep.ID) != "null" {
		t.Errorf("empty batch: %+v id %s, want -32600 with id null", rep.Error, rep.ID)
	}
	// Only notifications: nothing.
	hr := e.do("POST", "/", []byte(`[{"jsonrpc":"2.0","method":"ListTasks"},{"jsonrpc":"2.0","method":"GetTask","params":{"id":"x"}}]`), v1Headers(""))
	if hr.status != http.StatusNoContent || len(hr.body) != 0 {
		t.Errorf("batch of notifications: HTTP %d %q, want 204 and no body", hr.status, hr.body)
	}
	// [1] → an array with one Invalid Request.
	hr = e.do("POST", "/", []byte(`[1]`), v1Headers(""))
	var reps []rpcReply
	if err := json.Unmarshal(hr.body, &reps); err != nil || len(reps) != 1 || reps[0].Error == nil || reps[0].Error.Code != a2a.CodeInvalidRequest {
		t.Errorf("[1]: %s", hr.body)
	}
	// Batch without a version header: every call answered -32009.
	h := v1Headers("")
	h.Del("A2A-Version")
	hr = e.do("POST", "/", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ListTasks"},{"jsonrpc":"2.0","id":2,"method":"ListTasks"}]`), h)
	reps = nil
	if err := json.Unmarshal(hr.body, &reps); err != nil || len(reps) != 2 {
		t.Fatalf("versionless batch: %s", hr.body)
	}
	for _, r := range reps {
		if r.Error == nil || r.Error.Code != a2a.CodeVersionNotSupported {
			t.Errorf("versionless batch item: %+v", r.Error)
		}
	}
	// A huge batch is refused, not run.
	var items []string
	for i := 0; i < 101; i++ {
		items = append(items, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ListTasks"}`, i))
	}
	hr = e.do("POST", "/", []byte("["+strings.Join(items, ",")+"]"), v1Headers(""))
	if hr.status != http.StatusOK {
		t.Errorf("101-call batch: HTTP %d", hr.status)
	}
}

func TestJSONRPCBodyTooLarge(t *testing.T) {
	e := newTestEnvWith(t, Config{}, TransportConfig{MaxBodyBytes: 1024})
	big := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 4096) + `"}]}}}`
	hr, rep := e.rawRPC(big, v1Headers(""))
	if rep.Error == nil {
		t.Fatalf("oversized body accepted: %s", hr.body)
	}
	if rep.Error.Code != a2a.CodeInvalidRequest && rep.Error.Code != a2a.CodeInvalidParams {
		t.Errorf("oversized body: code %d", rep.Error.Code)
	}
	checkErrorInfo(t, rep.Error.Data, "")
	// The server still works.
	e.list("", map[string]any{})
	// Just under the limit is fine.
	small := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
	if _, rep := e.rawRPC(small, v1Headers("")); rep.Error != nil {
		t.Errorf("small body: %+v", rep.Error)
	}
}

// RPC-15: a request Content-Type that is not JSON is ContentTypeNotSupported
// (-32005, reason CONTENT_TYPE_NOT_SUPPORTED) with HTTP 200 and a null id
// (the body is not read); JSON types with parameters, in any case, and a
// missing Content-Type are accepted.
func TestJSONRPCContentType(t *testing.T) {
	e := newTestEnv(t, Config{})
	body := rpcBody(1, a2a.MethodListTasks, map[string]any{})
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/jsonx", "application/json;;"} {
		h := v1Headers("")
		h.Set("Content-Type", ct)
		_, rep := e.rawRPC(body, h)
		if rep.Error == nil || rep.Error.Code != a2a.CodeContentTypeNotSupported || string(rep.ID) != "null" {
			t.Errorf("Content-Type %q: id %s %+v, want -32005 with id null", ct, rep.ID, rep.Error)
			continue
		}
		checkErrorInfo(t, rep.Error.Data, "CONTENT_TYPE_NOT_SUPPORTED")
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "application/a2a+json", "APPLICATION/JSON", "Application/A2A+JSON; charset=UTF-8", ""} {
		h := v1Headers("")
		h.Set("Content-Type", ct)
		if _, rep := e.rawRPC(body, h); rep.Error != nil {
			t.Errorf("Content-Type %q refused: %+v", ct, rep.Error)
		}
	}
}

func TestJSONRPCGetIsNotServed(t *testing.T) {
	e := newTestEnv(t, Config{})
	hr := e.do("GET", "/", nil, v1Headers(""))
	if hr.status != http.StatusTeapot {
		t.Errorf("GET /: HTTP %d, want the request left to the next handler", hr.status)
	}
}

// ---------------------------------------------------------------- version (RPC-2)

func TestVersionHeader(t *testing.T) {
	e := newTestEnv(t, Config{})
	body := rpcBody(1, a2a.MethodListTasks, map[string]any{})
	// RPC-2 (§3.6.2): only Major.Minor 1.0; a later minor, a bare major
	// and a malformed value are refused too.
	for _, v := range []string{"", "0.3", "2.0", "abc", " ", "0", "10.0", "1.1", "1", "1.", "1.0.", "01.0", "1.0-rc", "1.x"} {
		h := v1Headers("")
		if v == "" {
			h.Del("A2A-Version")
		} else {
			h.Set("A2A-Version", v)
		}
		_, rep := e.rawRPC(body, h)
		if rep.Error == nil || rep.Error.Code != a2a.CodeVersionNotSupported {
			t.Errorf("A2A-Version %q: %+v, want -32009", v, rep.Error)
			continue
		}
		checkErrorInfo(t, rep.Error.Data, "VERSION_NOT_SUPPORTED")
	}
	for _, v := range []string{"1.0", "1.0.3", " 1.0 ", "1.0.0-rc"} {
		h := v1Headers("")
		h.Set("A2A-Version", v)
		if _, rep := e.rawRPC(body, h); rep.Error != nil {
			t.Errorf("A2A-Version %q refused: %+v", v, rep.Error)
		}
	}
	// Query parameter.
	h := v1Headers("")
	h.Del("A2A-Version")
	hr := e.do("POST", "/?A2A-Version=1.0", []byte(body), h)
	var rep rpcReply
	_ = json.Unmarshal(hr.body, &rep)
	if rep.Error != nil || rep.Result == nil {
		t.Errorf("?A2A-Version=1.0 refused: %s", hr.body)
	}
	// Header name is case-insensitive.
	h = v1Headers("")
	h.Del("A2A-Version")
	h["a2a-version"] = []string{"1.0"}
	if _, rep := e.rawRPC(body, h); rep.Error != nil {
		t.Errorf("lower-case a2a-version header refused: %+v", rep.Error)
	}
	// A version error on a stream method is plain JSON.
	h = v1Headers("")
	h.Del("A2A-Version")
	hr = e.do("POST", "/", []byte(rpcBody(1, a2a.MethodSendStreamingMessage, sendReq(msg("x")))), h)
	if !strings.HasPrefix(hr.header.Get("Content-Type"), "application/json") || !strings.Contains(string(hr.body), "-32009") {
		t.Errorf("versionless stream: %q %s", hr.header.Get("Content-Type"), hr.body)
	}
}

// ---------------------------------------------------------------- extensions (RPC-3)

func TestRequiredExtension(t *testing.T) {
	const ext = "urn:example:ext:v1"
	for _, cfg := range []struct {
		name string
		c    Config
	}{
		{"required only", Config{RequiredExtensions: []string{ext}}},
		{"declared and required", Config{Extensions: []string{ext, "urn:other"}, RequiredExtensions: []string{ext}}},
	} {
		t.Run(cfg.name, func(t *testing.T) {
			e := newTestEnv(t, cfg.c)
			body := rpcBody(1, a2a.MethodListTasks, map[string]any{})
			_, rep := e.rawRPC(body, v1Headers(""))
			if rep.Error == nil || rep.Error.Code != a2a.CodeExtensionSupportRequired {
				t.Fatalf("no A2A-Extensions: %+v, want -32008", rep.Error)
			}
			checkErrorInfo(t, rep.Error.Data, "EXTENSION_SUPPORT_REQUIRED")
			h := v1Headers("")
			h.Set("A2A-Extensions", "urn:unrelated, "+ext)
			hr, rep := e.rawRPC(body, h)
			if rep.Error != nil {
				t.Fatalf("with the extension: %+v", rep.Error)
			}
			echo := hr.header.Get("A2A-Extensions")
			if !strings.Contains(echo, ext) {
				t.Errorf("A2A-Extensions echo %q, want it to list %s", echo, ext)
			}
			if strings.Contains(echo, "urn:unrelated") {
				t.Errorf("echo %q lists an extension the agent does not support", echo)
			}
			// Also over REST.
			hr = e.do("GET", "/tasks", nil, v1Headers(""))
			if hr.status != http.StatusBadRequest || !strings.Contains(string(hr.body), "EXTENSION_SUPPORT_REQUIRED") {
				t.Errorf("REST without the extension: %d %s", hr.status, hr.body)
			}
		})
	}
}

func TestOptionalExtensionEchoed(t *testing.T) {
	e := newTestEnv(t, Config{Extensions: []string{"urn:a", "urn:b"}})
	h := v1Headers("")
	h.Add("A2A-Extensions", "urn:b")
	h.Add("A2A-Extensions", "urn:c")
	hr, rep := e.rawRPC(rpcBody(1, a2a.MethodListTasks, map[string]any{}), h)
	if rep.Error != nil {
		t.Fatal(rep.Error)
	}
	if got := hr.header.Get("A2A-Extensions"); got != "urn:b" {
		t.Errorf("echo %q, want urn:b", got)
	}
	hr, _ = e.rawRPC(rpcBody(1, a2a.MethodListTasks, map[string]any{}), v1Headers(""))
	if got := hr.header.Get("A2A-Extensions"); got != "" {
		t.Errorf("echo %q without activation", got)
	}
}

// ---------------------------------------------------------------- SSE (RPC-4)

func TestSSEFraming(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 3}})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("frame\nwith newline")), 42)
	if ct := s.resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Errorf("Content-Type %q", ct)
	}
	// Read raw lines to check framing precisely: each event is an id line
	// (RPC-17: its sequence number, strictly increasing after the first
	// Task's) and one data line.
	n := 0
	lastID, sawID := -1, false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			break
		}
		line = strings.TrimRight(line, "\n")
		switch {
		case line == "", strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			id, err := strconv.Atoi(strings.TrimPrefix(line, "id: "))
			if err != nil || id <= lastID {
				t.Errorf("SSE id line %q after id %d, want a larger number", line, lastID)
			}
			lastID, sawID = id, true
		case strings.HasPrefix(line, "data: "):
			if !sawID {
				t.Errorf("data line without an id line before it: %q", line)
			}
			sawID = false
			n++
			var rep rpcReply
			if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &rep); err != nil {
				t.Errorf("data line is not one JSON document: %v: %q", err, line)
				continue
			}
			if string(rep.ID) != "42" || rep.JSONRPC != "2.0" || rep.Result == nil {
				t.Errorf("data line is not a JSON-RPC result for id 42: %q", line)
			}
		default:
			t.Errorf("unexpected SSE line %q", line)
		}
	}
	if n < 5 {
		t.Errorf("%d data lines, want at least 5", n)
	}
}

func TestSSEKeepAlive(t *testing.T) {
	g := newGate()
	e := newTestEnvWith(t, Config{Backend: g}, TransportConfig{KeepAlive: 20 * time.Millisecond})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("idle")), 1)
	g.waitStarted(t)
	// Read the events already sent (Task, WORKING, chunk) in the background.
	done := make(chan []a2a.StreamResponse, 1)
	go func() { done <- s.rpcAll("1") }()
	time.Sleep(200 * time.Millisecond) // sleep: an idle stream for ten keep-alive periods (elapsed time is tested)
	g.release <- struct{}{}
	evs := <-done
	if len(evs) == 0 || eventState(evs[len(evs)-1]) != a2a.TaskStateInputRequired {
		t.Errorf("stream did not end with INPUT_REQUIRED: %s", mustJSON(evs))
	}
	var ka int
	for _, c := range s.commentLines() {
		if strings.HasPrefix(c, ": keep-alive") || strings.HasPrefix(c, ":keep-alive") {
			ka++
		}
	}
	if ka < 2 {
		t.Errorf("%d keep-alive comments on a stream idle for 200ms at 20ms intervals, want several", ka)
	}
}

func TestSSEDisconnectDoesNotCancel(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("bye")), 1)
	d, _ := s.next()
	id := s.rpcEvent(d, "1").Task.ID
	g.waitStarted(t)
	s.close()
	time.Sleep(100 * time.Millisecond) // sleep: lets the server see the client leave before the turn ends; shorter weakens, never flakes
	g.release <- struct{}{}
	got := e.waitState("", id, a2a.TaskStateInputRequired, 10*time.Second)
	if statusText(got) != "done: bye" {
		t.Errorf("status %q", statusText(got))
	}
}

func TestSSEDisconnectCancelsWhenConfigured(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, CancelOnDisconnect: true})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("bye")), 1)
	d, _ := s.next()
	id := s.rpcEvent(d, "1").Task.ID
	g.waitStarted(t)
	s.close()
	e.waitState("", id, a2a.TaskStateCanceled, 10*time.Second)
}

func TestSSEManyShortStreamsWithKeepAlive(t *testing.T) {
	// Keep-alive writes must stop before the handler returns: run many short
	// streams with a tiny keep-alive interval (meaningful under -race).
	e := newTestEnvWith(t, Config{Backend: backend.EchoBackend{Chunks: 2, Delay: time.Millisecond}}, TransportConfig{KeepAlive: time.Millisecond})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 5; j++ {
				s, resp := e.tryStream("POST", "/", rpcBody(1, a2a.MethodSendStreamingMessage, sendReq(msg("k"))), v1Headers(""))
				if s == nil {
					resp.Body.Close()
					t.Errorf("stream refused: HTTP %d", resp.StatusCode)
					return
				}
				for {
					if _, ok := s.next(); !ok {
						break
					}
				}
				s.close()
			}
		}()
	}
	wg.Wait()
}

func TestStreamErrorsBeforeStartArePlainJSON(t *testing.T) {
	e := newTestEnv(t, Config{})
	for _, params := range []any{
		map[string]any{"message": "x"},
		map[string]any{"message": map[string]any{"messageId": "m", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}}, "taskId": "missing"}},
	} {
		hr := e.do("POST", "/", []byte(rpcBody(1, a2a.MethodSendStreamingMessage, params)), v1Headers(""))
		if !strings.HasPrefix(hr.header.Get("Content-Type"), "application/json") {
			t.Errorf("%v: Content-Type %q, want plain JSON", params, hr.header.Get("Content-Type"))
		}
		var rep rpcReply
		if err := json.Unmarshal(hr.body, &rep); err != nil || rep.Error == nil {
			t.Errorf("%v: %s", params, hr.body)
		}
	}
}
