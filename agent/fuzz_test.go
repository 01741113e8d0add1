package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// fuzzHandler is one handler shared by every fuzz input (a store per input
// would make the fuzzer crawl).
func fuzzHandler(f *testing.F) HTTPHandler {
	st, err := store.OpenSQLite(filepath.Join(f.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		f.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		_ = hub.Close()
		_ = st.Close()
	})
	// Zero-delay echo turns end fast; a short ContextWait keeps the fuzzer moving.
	return NewHTTPHandler(NewService(hub, Config{ContextWait: 10 * time.Millisecond}), TransportConfig{MaxBodyBytes: 1 << 16})
}

func FuzzJSONRPC(f *testing.F) {
	seeds := []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]},"configuration":{"returnImmediately":true,"historyLength":0}}}`,
		`{"jsonrpc":"2.0","id":"s","method":"SendStreamingMessage","params":{"message":{"messageId":"m2","contextId":"c","role":1,"parts":[{"data":{"a":1}}]}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"x","historyLength":3}}`,
		`{"jsonrpc":"2.0","id":3,"method":"ListTasks","params":{"pageSize":2,"status":"TASK_STATE_WORKING","pageToken":"AAAA.BBBB"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"CancelTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":6,"method":"GetExtendedAgentCard"}`,
		`{"jsonrpc":"2.0","id":7,"method":"CreateTaskPushNotificationConfig","params":{"taskId":"x","url":"https://e"}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ListTasks"},{"jsonrpc":"2.0","method":"GetTask"}]`,
		`[]`, `[1]`, `{}`, `null`, `"x"`, `{"jsonrpc":"2.0","method":"GetTask"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"raw":"aGk=","mediaType":"text/plain"},{"url":"file:///etc/passwd"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}],"metadata":{"iac_code":{"cwd":"/nonexistent","api_key":"k"}}}}}`,
		"\xff\xfe{",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	h := fuzzHandler(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("A2A-Version", "1.0")
		w := httptest.NewRecorder()
		if !h.Serve(w, r, "fuzz") {
			t.Fatal("POST / not served")
		}
		res := w.Result()
		switch {
		case res.StatusCode == http.StatusNoContent:
			if w.Body.Len() != 0 {
				t.Fatalf("204 with a body: %q", w.Body.Bytes())
			}
		case res.StatusCode != http.StatusOK:
			t.Fatalf("HTTP %d", res.StatusCode)
		case strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream"):
			for _, line := range strings.Split(w.Body.String(), "\n") {
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					checkRPCDoc(t, []byte(d), false)
				}
			}
		default:
			out := bytes.TrimSpace(w.Body.Bytes())
			if len(out) > 0 && out[0] == '[' {
				var arr []json.RawMessage
				if err := json.Unmarshal(out, &arr); err != nil || len(arr) == 0 {
					t.Fatalf("batch answer is not a non-empty array: %q", out)
				}
				for _, d := range arr {
					checkRPCDoc(t, d, true)
				}
				return
			}
			checkRPCDoc(t, out, true)
		}
	})
}

// checkRPCDoc asserts b is one JSON-RPC 2.0 response object.
func checkRPCDoc(t *testing.T, b []byte, needErrInfo bool) {
	t.Helper()
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatalf("not a JSON-RPC object: %v: %q", err, b)
	}
	if _, ok := keys["id"]; !ok || string(keys["jsonrpc"]) != `"2.0"` {
		t.Fatalf("missing jsonrpc/id: %q", b)
	}
	var rep rpcReply
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("not a JSON-RPC object: %v: %q", err, b)
	}
	if (rep.Error == nil) == (rep.Result == nil) {
		t.Fatalf("want exactly one of result and error: %q", b)
	}
	if rep.Error != nil && needErrInfo {
		if len(rep.Error.Data) == 0 || rep.Error.Data[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" {
			t.Fatalf("error without ErrorInfo: %q", b)
		}
	}
}
