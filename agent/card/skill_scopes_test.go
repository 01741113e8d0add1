package card

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// scopedConfig is validConfig with a deploy skill requiring two scopes.
func scopedConfig() *Config {
	cfg := validConfig()
	cfg.Skills = append(cfg.Skills, Skill{ID: "deploy", Name: "Deploy", Description: "Deploys the generated stack.", Tags: []string{"ops"},
		RequiresScopes: []string{"deploy:write", "deploy:prod"}})
	return cfg
}

// TestSkillRequiresScopesOnCard (AUTH-8): requires_scopes becomes the
// skill's securityRequirements on the JWT bearer scheme, in the A2A 1.0
// form by default and the bare form of security_requirements_form a2a-go;
// a skill without requires_scopes has none; without a scheme carrying
// scopes (Basic only) none is written.
func TestSkillRequiresScopesOnCard(t *testing.T) {
	cfg := scopedConfig()
	body := string(renderBody(t, Build(cfg, Runtime{BaseURL: "https://agent.example/", Bearer: true, BearerJWT: true, Basic: true})))
	want := `"id":"deploy","name":"Deploy","description":"Deploys the generated stack.","tags":["ops"],"securityRequirements":[{"schemes":{"bearerAuth":{"list":["deploy:write","deploy:prod"]}}}]`
	if !strings.Contains(body, want) {
		t.Errorf("card lacks %s:\n%s", want, body)
	}
	var c a2a.AgentCard
	if err := json.Unmarshal([]byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if c.Skills[0].SecurityRequirements != nil {
		t.Errorf("skill without requires_scopes has requirements %+v", c.Skills[0].SecurityRequirements)
	}
	cfg.SecurityRequirementsForm = FormA2AGo
	if body := string(renderBody(t, Build(cfg, Runtime{BaseURL: "https://agent.example/", Bearer: true, BearerJWT: true}))); !strings.Contains(body, `"securityRequirements":[{"schemes":{"bearerAuth":["deploy:write","deploy:prod"]}}]`) {
		t.Errorf("a2a-go form: %s", body)
	}
	if body := string(renderBody(t, Build(scopedConfig(), Runtime{BaseURL: "https://agent.example/", Basic: true}))); strings.Count(body, "securityRequirements") != 1 {
		t.Errorf("basic only: a skill requirement names a scheme without scopes:\n%s", body)
	}
	sc := scopedConfig().SkillScopes()
	if len(sc) != 1 || strings.Join(sc["deploy"], " ") != "deploy:write deploy:prod" {
		t.Errorf("SkillScopes = %v", sc)
	}
}

// TestSkillRequiresScopesValidate: each scope must be one scope token.
func TestSkillRequiresScopesValidate(t *testing.T) {
	for _, bad := range []string{"a b", "", `x"y`, "a\tb"} {
		cfg := scopedConfig()
		cfg.Skills[1].RequiresScopes = []string{bad}
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "requires_scopes") {
			t.Errorf("scope %q: %v", bad, err)
		}
	}
	if err := scopedConfig().Validate(); err != nil {
		t.Errorf("valid config: %v", err)
	}
}
