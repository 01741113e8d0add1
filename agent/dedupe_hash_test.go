package agent

import (
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The reflection-free messageHash hashes the same bytes as encoding/json
// (stored BodyHash values stay valid), and fails as it does.
func TestMessageHashMatchesEncodingJSON(t *testing.T) {
	s := "<tricky \u2028 \xff \x01>"
	msgs := []*a2a.Message{
		{MessageID: "m", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart("hello")}},
		{MessageID: "m", ContextID: "c", TaskID: "t", Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(s), {Data: json.RawMessage(` {"a" : "<"} `)}, {Raw: []byte{0, 1}, MediaType: "x/y"}},
			Metadata: map[string]any{"z": 1.5, "a": map[string]any{"k": []any{s, nil}}}, Extensions: []string{"e"}, ReferenceTaskIDs: []string{"r1", "r2"}},
		{Role: a2a.RoleAgent},
		{},
	}
	for _, m := range msgs {
		got, err := messageHash(m)
		want, werr := messageHashMarshal(m)
		if err != nil || werr != nil || got != want {
			t.Fatalf("%+v: hash %s (%v), encoding/json's %s (%v)", m, got, err, want, werr)
		}
	}
	bad := &a2a.Message{Role: a2a.RoleUser, Parts: []a2a.Part{{Data: json.RawMessage(`{`)}}}
	_, err := messageHash(bad)
	_, werr := messageHashMarshal(bad)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Fatalf("invalid data: error %v, encoding/json's %v", err, werr)
	}
}
