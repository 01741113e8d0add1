package v03

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// RPC-2: the 0.3 → 1.0 → 0.3 translation of results and stream events
// never panics; what it accepts renders as 0.3 JSON that it accepts again,
// and the second round gives the same JSON as the first (the translation
// is stable).
func FuzzEvent10(f *testing.F) {
	for _, s := range []string{
		`{"kind":"task","id":"t","contextId":"c","status":{"state":"working","timestamp":"2024-01-01T00:00:00Z"},"history":[{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}]}],"artifacts":[{"artifactId":"a","parts":[{"kind":"file","file":{"bytes":"aGk=","mimeType":"text/plain","name":"x"}}]}]}`,
		`{"kind":"message","messageId":"m","role":"agent","parts":[{"kind":"data","data":{"a":1}},{"kind":"file","file":{"uri":"https://e/x"}}],"contextId":"c","taskId":"t"}`,
		`{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"input-required","message":{"kind":"message","messageId":"m","role":"agent","parts":[]}},"final":true,"metadata":{"k":"v"}}`,
		`{"kind":"artifact-update","taskId":"t","contextId":"c","artifact":{"artifactId":"a","name":"n","parts":[{"kind":"text","text":"x"}]},"append":true,"lastChunk":false}`,
		`{"kind":"status-update","status":{"state":"bogus"}}`,
		`{"kind":"x"}`, `{}`, `[]`, `null`, `{"kind":"task","status":{"state":"completed"},"history":[{"parts":[{"kind":"file","file":{}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, _, err := Event10(raw)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		out1 := renderEvent03(t, ev)
		if out1 == nil {
			return // nothing set (an object without the kind's members)
		}
		ev2, _, err := Event10(out1)
		if err != nil {
			t.Fatalf("the 0.3 rendering %s of an accepted event is refused: %v", out1, err)
		}
		if out2 := renderEvent03(t, ev2); !bytes.Equal(out1, out2) {
			t.Fatalf("unstable translation:\n%s\n%s", out1, out2)
		}
	})
}

func renderEvent03(t *testing.T, ev a2a.StreamResponse) []byte {
	t.Helper()
	v := Event03(ev)
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("rendering %#v: %v", v, err)
	}
	return b
}

// RPC-2: 0.3 params of every method translate without panicking into
// valid 1.0 JSON or a clean error; message/send params translated to 1.0,
// back to 0.3 and to 1.0 again give the same 1.0 JSON.
func FuzzParamsTo10(f *testing.F) {
	methods := []string{MethodSend, MethodStream, MethodGet, MethodCancel, MethodResubscribe, MethodPushSet,
		MethodPushGet, MethodPushList, MethodPushDelete, MethodAuthenticatedCard, "tasks/unknown"}
	for i, s := range []string{
		`{"message":{"kind":"message","messageId":"m","role":"user","parts":[{"kind":"text","text":"hi"}],"contextId":"c"},"configuration":{"blocking":false,"historyLength":2,"acceptedOutputModes":["text/plain"],"pushNotificationConfig":{"url":"https://e/cb","token":"t"}},"metadata":{"a":1}}`,
		`{"id":"t","historyLength":3}`, `{"id":"t","metadata":{}}`, `{"id":"t"}`,
		`{"taskId":"t","pushNotificationConfig":{"id":"p","url":"https://e","authentication":{"schemes":["Bearer"],"credentials":"x"}}}`,
		`{"id":"t","pushNotificationConfigId":"p"}`, `{"id":"t"}`, `{"id":"t","pushNotificationConfigId":""}`, `{}`, `null`, `[1]`,
	} {
		f.Add(i, []byte(s))
	}
	f.Fuzz(func(t *testing.T, m int, raw []byte) {
		if m < 0 {
			m = -m
		}
		method := methods[m%len(methods)]
		out, err := ParamsTo10(method, raw)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("%s: invalid JSON %q", method, out)
		}
		if method != MethodSend {
			return
		}
		var req a2a.SendMessageRequest
		if err := json.Unmarshal(out, &req); err != nil {
			t.Fatalf("1.0 params %s do not decode: %v", out, err)
		}
		back, err := json.Marshal(SendParams03(&req))
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParamsTo10(method, back)
		if err != nil {
			t.Fatalf("0.3 params %s (from %s) refused: %v", back, out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("unstable translation:\n%s\n%s", out, again)
		}
	})
}
