package validate

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// requirementNames returns the scheme names of a v1.0 SecurityRequirement
// ({"schemes": {name: {"list": […]}}}) or, for legacy shapes, of the
// object itself ({name: [scopes]}).
func requirementNames(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	src := m
	if s, ok := m["schemes"].(map[string]any); ok {
		src = s
	}
	var names []string
	for k := range src {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// security checks the security schemes and that every requirement
// (card and skills) names a declared scheme.
func (c *checker) security(card map[string]any) {
	schemes, _ := card["securitySchemes"].(map[string]any)
	names := make([]string, 0, len(schemes))
	for name := range schemes {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ptr := Pointer("securitySchemes", name)
		m, ok := schemes[name].(map[string]any)
		if !ok || len(m) != 1 {
			c.add(Error, ptr, "a security scheme must have exactly one member (apiKeySecurityScheme, httpAuthSecurityScheme, oauth2SecurityScheme, openIdConnectSecurityScheme or mtlsSecurityScheme)",
				`wrap the scheme, e.g. {"httpAuthSecurityScheme": {"scheme": "Bearer"}}; v0.x "type" discriminators are gone`)
		}
	}
	used := false
	checkReqs := func(ptr string, v any) {
		arr, _ := v.([]any)
		for i, r := range arr {
			used = true
			for _, n := range requirementNames(r) {
				if _, ok := schemes[n]; !ok {
					c.add(Error, Pointer(append(splitPtr(ptr), i)...), fmt.Sprintf("security requirement names scheme %q, which securitySchemes does not declare", n),
						fmt.Sprintf("declare %q in securitySchemes or fix the name", n))
				}
			}
		}
	}
	checkReqs("/securityRequirements", card["securityRequirements"])
	if legacy, ok := card["security"]; ok {
		checkReqs("/security", legacy)
		c.add(Warning, "/security", "security is the pre-1.0 name of securityRequirements",
			"use "+securityRequirementsShape(legacy))
	}
	skills, _ := card["skills"].([]any)
	for i, s := range skills {
		if m, ok := s.(map[string]any); ok {
			checkReqs(Pointer("skills", i, "securityRequirements"), m["securityRequirements"])
		}
	}
	if len(schemes) > 0 && !used {
		c.add(Warning, "/securitySchemes", "securitySchemes are declared but no securityRequirements says which are needed",
			"add "+securityRequirementsShape(nil)+" naming the schemes clients must use")
	}
	if caps, ok := card["capabilities"].(map[string]any); ok && caps["extendedAgentCard"] == true && len(schemes) == 0 {
		c.add(Warning, "/capabilities/extendedAgentCard", "extendedAgentCard is true but no securitySchemes say how to authenticate for it",
			"declare the scheme(s) GetExtendedAgentCard accepts in securitySchemes and securityRequirements")
	}
}

// securityRequirementsShape renders legacy requirements in the v1.0 shape.
func securityRequirementsShape(legacy any) string {
	arr, _ := legacy.([]any)
	var reqs []map[string]any
	for _, r := range arr {
		m, ok := r.(map[string]any)
		if !ok {
			continue
		}
		schemes := map[string]any{}
		for k, v := range m {
			scopes := []any{}
			if l, ok := v.([]any); ok {
				scopes = l
			}
			schemes[k] = map[string]any{"list": scopes}
		}
		reqs = append(reqs, map[string]any{"schemes": schemes})
	}
	if len(reqs) == 0 {
		reqs = []map[string]any{{"schemes": map[string]any{"<scheme>": map[string]any{"list": []any{}}}}}
	}
	b, _ := json.Marshal(map[string]any{"securityRequirements": reqs})
	return strings.TrimSuffix(strings.TrimPrefix(string(b), "{"), "}")
}
