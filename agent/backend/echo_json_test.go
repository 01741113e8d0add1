package backend

import (
	"encoding/json"
	"testing"
)

// echoToolJSON writes what encoding/json writes for {key: v}.
func TestEchoToolJSONMatchesEncodingJSON(t *testing.T) {
	for _, v := range []any{"", "hello there", "<a & b> \u2028 \xff \x00 \"q\" \\", 0, -12, 1 << 40, 2.5, true, nil} {
		want, _ := json.Marshal(map[string]any{"text": v})
		if got := echoToolJSON("text", v); string(got) != string(want) {
			t.Fatalf("%#v: %s, want %s", v, got, want)
		}
	}
}
