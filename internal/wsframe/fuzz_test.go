package wsframe

import (
	"bytes"
	"encoding/json"
	"testing"
)

// XPORT-3: a client frame decodes without panicking; a frame id that
// ValidID accepts and a JSON payload encode into a server frame that is
// valid JSON and decodes back to the same id, payload and final flag.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		`{"id":1,"payload":{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}},"headers":{"A2A-Version":"1.0","a2a-extensions":"urn:x"}}`,
		`{"id":"s-1","cancel":true}`, `{"id":null,"payload":{}}`, `{"id":-1.5e3,"payload":[]}`, `{"id":{"a":1}}`, `{"id":[1]}`,
		`{"headers":{"A2A-VERSION":"0.3"}}`, `{}`, `[]`, `"x"`, "\xff", `{"id":"\u2028","payload":"x"}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, final bool) {
		var r Request
		if err := json.Unmarshal(data, &r); err != nil {
			return
		}
		_, _ = Header(r.Headers, HeaderVersion)
		_, _ = Header(r.Headers, HeaderExtensions)
		if !ValidID(r.ID) {
			return
		}
		payload := r.Payload
		if len(bytes.TrimSpace(payload)) == 0 {
			payload = nil
		}
		out := Encode(r.ID, payload, final)
		if !json.Valid(out) {
			t.Fatalf("Encode(%q, %q) = %q: invalid JSON", r.ID, payload, out)
		}
		var back Response
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("the server frame %q does not decode: %v", out, err)
		}
		wantID := r.ID
		if len(bytes.TrimSpace(wantID)) == 0 {
			wantID = json.RawMessage("null")
		}
		if !jsonEqual(back.ID, wantID) || back.Final != final || (payload != nil && !jsonEqual(back.Payload, payload)) {
			t.Fatalf("round trip of %q: %q", data, out)
		}
	})
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
