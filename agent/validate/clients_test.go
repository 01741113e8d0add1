package validate

import (
	"strings"
	"testing"
)

// TestKnownClients (CARD-4, CARD-9): ProtoJSON securityRequirements get an
// info naming a2a-go <= v2.3.1 and the card option; the a2a-go form is a
// warning (not spec form), never an error; scopes of no known shape are an
// error.
func TestKnownClients(t *testing.T) {
	find := func(fs []Finding, sev Severity, sub string) *Finding {
		for i := range fs {
			if fs[i].Severity == sev && strings.Contains(fs[i].Message, sub) {
				return &fs[i]
			}
		}
		return nil
	}

	fs := Card([]byte(goodCard), Options{})
	f := find(fs, Info, "a2a-go (the official Go SDK) up to v2.3.1 cannot read this card")
	if f == nil || f.Pointer != "/securityRequirements/0/schemes/google" || !strings.Contains(f.Fix, "security_requirements_form a2a-go") {
		t.Fatalf("ProtoJSON card: want the a2a-go info with the option, got %v", fs)
	}

	bare := mutate(t, func(m map[string]any) {
		m["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"google": []any{"openid"}}}}
		first(m, "skills")["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"google": []any{}}}}
	})
	fs = Card(bare, Options{Production: true})
	if HasErrors(fs) {
		t.Fatalf("a2a-go form card has errors: %v", fs)
	}
	if find(fs, Info, "a2a-go (the official") != nil {
		t.Errorf("a2a-go form card still says a2a-go cannot read it: %v", fs)
	}
	w := find(fs, Warning, "not the A2A 1.0 ProtoJSON form")
	if w == nil || w.Pointer != "/securityRequirements/0/schemes/google" || len(fs) != 1 {
		t.Fatalf("a2a-go form card: want exactly the not-spec-form warning, got %v", fs)
	}

	mixed := mutate(t, func(m map[string]any) {
		first(m, "skills")["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"google": []any{}}}}
	})
	fs = Card(mixed, Options{})
	if find(fs, Info, "a2a-go (the official") == nil || find(fs, Warning, "not the A2A 1.0 ProtoJSON form") == nil {
		t.Errorf("mixed forms: want both findings, got %v", fs)
	}

	for name, scopes := range map[string]any{"string": "openid", "numbers": []any{1}, "list of numbers": map[string]any{"list": []any{2}}} {
		bad := mutate(t, func(m map[string]any) {
			m["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"google": scopes}}}
		})
		fs = Card(bad, Options{})
		if e := find(fs, Error, `scopes of scheme "google"`); e == nil || e.Pointer != "/securityRequirements/0/schemes/google" {
			t.Errorf("%s scopes: want an error, got %v", name, fs)
		}
	}
}
