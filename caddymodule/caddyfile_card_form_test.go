package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// TestCardRequirementsForm (CARD-4): `security_requirements_form` sets the
// card's form, an `agent` block inherits it unless its card sets one, and
// an unknown value is an error naming the valid ones, in the Caddyfile and
// in Validate (JSON configs).
func TestCardRequirementsForm(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name root
			security_requirements_form a2a-go
		}
		agent planner {
			card {
				name planner
			}
		}
		agent strict {
			card {
				name strict
				security_requirements_form protojson
			}
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := hs.card.SecurityRequirementsForm; got != card.FormA2AGo {
		t.Errorf("root form %q", got)
	}
	forms := map[string]string{}
	for _, a := range hs.agents {
		forms[a.name] = a.hs.card.SecurityRequirementsForm
	}
	if forms["planner"] != card.FormA2AGo || forms["strict"] != card.FormProtoJSON {
		t.Errorf("agent forms %v, want planner inheriting a2a-go and strict protojson", forms)
	}

	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\n}")
	if err != nil || hs.card.SecurityRequirementsForm != "" || hs.card.RequirementsForm() != 0 {
		t.Errorf("default form: %v %q", err, hs.card.SecurityRequirementsForm)
	}

	for _, src := range []string{
		"a2a {\ncard {\nname x\nsecurity_requirements_form bare\n}\n}",
		"a2a {\ncard {\nname x\n}\nagent p {\ncard {\nname p\nsecurity_requirements_form bare\n}\n}\n}",
	} {
		if _, err := parseBlock(t, src); err == nil || !strings.Contains(err.Error(), `security_requirements_form: "bare" is not a form (valid: protojson, a2a-go)`) {
			t.Errorf("unknown form: %v", err)
		}
	}
	if _, err := parseBlock(t, "a2a {\ncard {\nname x\nsecurity_requirements_form\n}\n}"); err == nil {
		t.Error("security_requirements_form without a value was accepted")
	}

	h := &CardHandler{Config: card.Config{Name: "x", SecurityRequirementsForm: "A2A-GO"}}
	if err := h.Validate(); err == nil || !strings.Contains(err.Error(), "valid: protojson, a2a-go") {
		t.Errorf("Validate of a JSON config with an unknown form: %v", err)
	}
	h.SecurityRequirementsForm = card.FormA2AGo
	if err := h.Validate(); err != nil {
		t.Errorf("Validate a2a-go: %v", err)
	}
}
