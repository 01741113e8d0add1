package wsframe

import (
	"encoding/json"
	"testing"
)

// TestEncode: server frames keep the payload's bytes and mark final
// (XPORT-3); a stream's last frame has no payload.
func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		id, payload string
		final       bool
		want        string
	}{
		{`"a"`, `{"jsonrpc":"2.0","id":1,"result":{}}`, true, `{"id":"a","payload":{"jsonrpc":"2.0","id":1,"result":{}},"final":true}`},
		{`7`, `{"x":1}`, false, `{"id":7,"payload":{"x":1},"final":false}`},
		{``, ``, true, `{"id":null,"final":true}`},
	} {
		var p json.RawMessage
		if tc.payload != "" {
			p = json.RawMessage(tc.payload)
		}
		got := string(Encode(json.RawMessage(tc.id), p, tc.final))
		if got != tc.want || !json.Valid([]byte(got)) {
			t.Errorf("Encode(%s, %s, %v) = %s, want %s", tc.id, tc.payload, tc.final, got, tc.want)
		}
	}
}

func TestHeaderAndID(t *testing.T) {
	h := map[string]string{"a2a-version": "1.0"}
	if v, ok := Header(h, HeaderVersion); !ok || v != "1.0" {
		t.Errorf("Header: %q %v", v, ok)
	}
	if _, ok := Header(h, HeaderExtensions); ok {
		t.Error("Header: absent header found")
	}
	for id, want := range map[string]bool{``: true, `null`: true, `"x"`: true, `-1`: true, `12`: true, `{}`: false, `[1]`: false, `true`: false} {
		if ValidID(json.RawMessage(id)) != want {
			t.Errorf("ValidID(%s) != %v", id, want)
		}
	}
}
