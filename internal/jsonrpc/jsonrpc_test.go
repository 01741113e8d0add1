package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestParseCall(t *testing.T) {
	cases := []struct {
		name, body   string
		wantErr      bool
		id, method   string // id "" = nil
		params       string
		notification bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`, false, "1", "GetTask", `{"id":"x"}`, false},
		{"string id", ` {"jsonrpc":"2.0","id":"a","method":"M"} `, false, `"a"`, "M", "", false},
		{"null id is not a notification", `{"jsonrpc":"2.0","id":null,"method":"M"}`, false, "null", "M", "", false},
		{"notification", `{"jsonrpc":"2.0","method":"M"}`, false, "", "M", "", true},
		{"negative and fractional id", `{"jsonrpc":"2.0","id":-1.5e3,"method":"M"}`, false, "-1.5e3", "M", "", false},
		{"not an object", `[1]`, true, "null", "", "", false},
		{"empty", ``, true, "null", "", "", false},
		{"object id", `{"jsonrpc":"2.0","id":{},"method":"M"}`, true, "null", "", "", false},
		{"bool id", `{"jsonrpc":"2.0","id":true,"method":"M"}`, true, "null", "", "", false},
		{"wrong version keeps the id", `{"jsonrpc":"1.0","id":7,"method":"M"}`, true, "7", "", "", false},
		{"version a number", `{"jsonrpc":2.0,"id":7,"method":"M"}`, true, "7", "", "", false},
		{"invalid notification is answered with null", `{"jsonrpc":"1.0","method":"M"}`, true, "null", "", "", false},
		{"method not a string", `{"jsonrpc":"2.0","id":7,"method":{"x":1}}`, true, "7", "", "", false},
		{"method empty", `{"jsonrpc":"2.0","id":7,"method":""}`, true, "7", "", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			call, err := ParseCall(json.RawMessage(c.body))
			if (err != nil) != c.wantErr {
				t.Fatalf("error %v, want error %v", err, c.wantErr)
			}
			if err != nil && (err.Code != CodeInvalidRequest || err.Message == "") {
				t.Errorf("error %+v, want Invalid Request with a message", err)
			}
			if string(call.ID) != c.id {
				t.Errorf("id %q, want %q", call.ID, c.id)
			}
			if !c.wantErr && call.Method != c.method {
				t.Errorf("method %q, want %q", call.Method, c.method)
			}
			if string(call.Params) != c.params {
				t.Errorf("params %q, want %q", call.Params, c.params)
			}
			if call.Notification != c.notification {
				t.Errorf("notification %v, want %v", call.Notification, c.notification)
			}
		})
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		`1`: true, `-2`: true, `1.5`: true, `"x"`: true, `""`: true, `null`: true, ` 3 `: true,
		`{}`: false, `[]`: false, `true`: false, `nul`: false, `"open`: false, ``: false, `01x`: false,
	} {
		if got := ValidID(json.RawMessage(id)); got != want {
			t.Errorf("ValidID(%s) = %v, want %v", id, got, want)
		}
	}
}

// TestEnvelopeWire pins the member names and omissions of the envelope.
func TestEnvelopeWire(t *testing.T) {
	b, _ := json.Marshal(NewRequest(7, "GetTask", map[string]string{"id": "t"}))
	if string(b) != `{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"t"}}` {
		t.Errorf("request %s", b)
	}
	b, _ = json.Marshal(Request{JSONRPC: Version, Method: "M"})
	if string(b) != `{"jsonrpc":"2.0","method":"M"}` {
		t.Errorf("notification %s", b)
	}
	b, _ = json.Marshal(Response{JSONRPC: Version, ID: json.RawMessage(`"a"`), Result: json.RawMessage(`{}`)})
	if string(b) != `{"jsonrpc":"2.0","id":"a","result":{}}` {
		t.Errorf("result %s", b)
	}
	b, _ = json.Marshal(Response{JSONRPC: Version, ID: NullID(), Error: &Error{Code: CodeParseError, Message: "Parse error"}})
	if string(b) != `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}` {
		t.Errorf("error %s", b)
	}
	var r Response
	if err := json.Unmarshal([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"m","data":[{"reason":"TASK_NOT_FOUND"}]}}`), &r); err != nil {
		t.Fatal(err)
	}
	if r.Error == nil || r.Error.Code != -32001 || string(r.Error.Data) != `[{"reason":"TASK_NOT_FOUND"}]` || r.Result != nil || r.Error.Error() != "m" {
		t.Errorf("decoded %+v", r)
	}
}

// TestPlainStringMatchesUnmarshal: where plainString answers, it decodes
// what json.Unmarshal decodes; escapes, non-ASCII and non-strings are left
// to json.Unmarshal.
func TestPlainStringMatchesUnmarshal(t *testing.T) {
	for in, plain := range map[string]bool{
		`"SendMessage"`: true, `""`: true, `"a b~"`: true,
		`"\u0041"`: false, `"a\"b"`: false, `"é"`: false, "\"a\x01\"": false, `"unterminated`: false,
		`null`: false, `1`: false, `"a"x"`: false, `"`: false, `SendMessage`: false,
	} {
		got, ok := plainString(json.RawMessage(in))
		if ok != plain {
			t.Errorf("plainString(%s) ok = %v, want %v", in, ok, plain)
		}
		var want string
		if err := json.Unmarshal([]byte(in), &want); ok && (err != nil || got != want) {
			t.Errorf("plainString(%s) = %q, json.Unmarshal = %q, %v", in, got, want, err)
		}
	}
}
