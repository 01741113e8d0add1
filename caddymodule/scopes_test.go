package caddymodule

import (
	"strings"
	"testing"
)

// TestUnmarshalScopes (AUTH-8): the Caddyfile's limits selectors, a
// skill's requires_scopes and jwt principal_claim parse; malformed
// selectors are config errors.
func TestUnmarshalScopes(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name x
			skill deploy {
				name Deploy
				description "Deploys the stack."
				tags ops
				requires_scopes deploy:write deploy:prod
			}
		}
		auth {
			jwt {
				secret 0123456789abcdef0123456789abcdef
				principal_claim azp
			}
		}
		limits scope:a2a.read {
			allow_methods GetTask ListTasks
		}
		limits claim:groups=ops {
			rate 10/s
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	if r := hs.agent.Limits["scope:a2a.read"]; r == nil || len(r.AllowMethods) != 2 {
		t.Errorf("scope:a2a.read = %+v", r)
	}
	if r := hs.agent.Limits["claim:groups=ops"]; r == nil || r.Rate != 10 {
		t.Errorf("claim:groups=ops = %+v", r)
	}
	if got := hs.card.Skills[0].RequiresScopes; strings.Join(got, " ") != "deploy:write deploy:prod" {
		t.Errorf("requires_scopes = %q", got)
	}
	if hs.auth.JWT == nil || hs.auth.JWT.PrincipalClaim != "azp" {
		t.Errorf("principal_claim = %+v", hs.auth.JWT)
	}
	if err := hs.agent.validateLimits(); err != nil {
		t.Errorf("validateLimits: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{"limits scope: {\nmax_turns 1\n}", "scope token"},
		{"limits claim:groups {\nmax_turns 1\n}", "claim:NAME=VALUE"},
		{"limits \"scope:a b\" {\nmax_turns 1\n}", "scope token"},
	} {
		hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+c.body+"\n}")
		if err == nil {
			err = hs.agent.validateLimits()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
	_, err = parseBlock(t, "a2a {\ncard {\nname x\nskill s {\nname S\ndescription \"A skill to test.\"\ntags t\nrequires_scopes \"a b\"\n}\n}\n}")
	if err == nil || !strings.Contains(err.Error(), "requires_scopes") {
		t.Errorf("requires_scopes with a space: %v", err)
	}
}
