package a2a

import (
	"encoding/json"
	"testing"
)

// TestSecurityRequirementForms (CARD-4): a requirement reads both the
// ProtoJSON and the a2a-go (bare array) form, and writes the form it is
// given; WithRequirementsForm copies.
func TestSecurityRequirementForms(t *testing.T) {
	for _, in := range []string{
		`{"schemes":{"oauth":{"list":["read","write"]},"mtls":{"list":[]}}}`,
		`{"schemes":{"oauth":["read","write"],"mtls":[]}}`,
		`{"schemes":{"oauth": ["read","write"],"mtls":{}}}`,
	} {
		var r SecurityRequirement
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got := r.Schemes["oauth"].List; len(got) != 2 || got[1] != "write" {
			t.Errorf("%s: oauth scopes %v", in, got)
		}
		if _, ok := r.Schemes["mtls"]; !ok {
			t.Errorf("%s: mtls lost", in)
		}
	}
	var bad SecurityRequirement
	if err := json.Unmarshal([]byte(`{"schemes":{"oauth":"read"}}`), &bad); err == nil {
		t.Error("a string scope list was accepted")
	}

	r := SecurityRequirement{Schemes: map[string]StringList{"bearerAuth": {}}}
	if b, _ := json.Marshal(r); string(b) != `{"schemes":{"bearerAuth":{"list":null}}}` && string(b) != `{"schemes":{"bearerAuth":{"list":[]}}}` {
		t.Errorf("ProtoJSON form: %s", b)
	}
	r.Form = RequirementsBare
	if b, _ := json.Marshal(r); string(b) != `{"schemes":{"bearerAuth":[]}}` {
		t.Errorf("bare form: %s", b)
	}

	c := &AgentCard{
		SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"k": {List: []string{"a"}}}}},
		Skills:               []AgentSkill{{ID: "s", SecurityRequirements: []SecurityRequirement{{Schemes: map[string]StringList{"k": {List: []string{}}}}}}},
	}
	bare := c.WithRequirementsForm(RequirementsBare)
	if bare.SecurityRequirements[0].Form != RequirementsBare || bare.Skills[0].SecurityRequirements[0].Form != RequirementsBare {
		t.Error("WithRequirementsForm did not set the form everywhere")
	}
	if c.SecurityRequirements[0].Form != RequirementsProtoJSON || c.Skills[0].SecurityRequirements[0].Form != RequirementsProtoJSON {
		t.Error("WithRequirementsForm changed the original")
	}
	if (*AgentCard)(nil).WithRequirementsForm(RequirementsBare) != nil {
		t.Error("nil card")
	}
}
