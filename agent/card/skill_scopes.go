package card

import (
	"slices"
	"sort"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SkillScopes returns the scopes each configured skill requires, by skill
// id (requires_scopes, AUTH-8); nil when no skill requires any.
func (c *Config) SkillScopes() map[string][]string {
	if c == nil {
		return nil
	}
	var out map[string][]string
	for _, s := range c.Skills {
		if len(s.RequiresScopes) == 0 {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[s.ID] = slices.Clone(s.RequiresScopes)
	}
	return out
}

// scopeSchemes returns the names of c's security schemes that carry OAuth
// 2.0 scopes: an HTTP bearer scheme taking JWTs, OAuth 2.0 and OpenID
// Connect schemes, sorted.
func scopeSchemes(c *a2a.AgentCard) []string {
	var out []string
	for name, s := range c.SecuritySchemes {
		switch {
		case s.HTTPAuth != nil && s.HTTPAuth.BearerFormat == "JWT",
			len(s.OAuth2) > 0, len(s.OpenIDConnect) > 0:
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// addSkillScopes writes the requires_scopes of cfg's skills as their
// securityRequirements on c (AUTH-8): one requirement per scheme that
// carries scopes, each naming every required scope (any one scheme
// suffices; A2A 1.0 SecurityRequirement). A card without such a scheme
// gets none (no scheme could satisfy them; the gateway refuses such a
// skill's messages to every caller). With withMTLS (mtls
// require_with_bearer, AUTH-9) each requirement also names mtlsAuth, as
// the card's own do.
func addSkillScopes(c *a2a.AgentCard, cfg *Config, withMTLS bool) {
	scopes := cfg.SkillScopes()
	if len(scopes) == 0 {
		return
	}
	schemes := scopeSchemes(c)
	for i := range c.Skills {
		req := scopes[c.Skills[i].ID]
		if len(req) == 0 {
			continue
		}
		var reqs []a2a.SecurityRequirement
		for _, name := range schemes {
			r := a2a.SecurityRequirement{Schemes: map[string]a2a.StringList{name: {List: slices.Clone(req)}}}
			if withMTLS {
				r.Schemes[SchemeMTLS] = a2a.StringList{List: []string{}}
			}
			reqs = append(reqs, r)
		}
		c.Skills[i].SecurityRequirements = reqs
	}
}
