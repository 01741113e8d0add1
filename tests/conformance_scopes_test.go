package tests

// Rows of the conformance table (conformance_bindings_test.go) for
// authorization by OAuth 2.0 scopes (AUTH-8, issue 30), on every binding
// that authenticates (stdio trusts its parent: no credential, no scopes):
// limits selecting callers by scope, a skill's requires_scopes refusing a
// message with PERMISSION_DENIED naming the missing scope, and the
// extended card listing only the skills the caller may use. The callers
// present JWTs (HS256, the conformance site's jwt secret) carrying the
// scopes.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
)

// The JWT principals of the conformance gateway (AUTH-8): reader holds
// a2a.read (limits scope:a2a.read: GetTask and ListTasks only), deployer
// a2a.write without deploy:write (the deploy skill's scope), shipper both.
const (
	confReader   = "reader"
	confDeployer = "deployer"
	confShipper  = "shipper"
	// confJWTSecret is the HS256 secret of the site's jwt block.
	confJWTSecret = "conf-jwt-secret-0123456789abcdefghij"
	confJWTIssuer = "https://conf-issuer.example"
)

func init() {
	for sub, scope := range map[string]string{
		confReader:   "a2a.read",
		confDeployer: "a2a.write",
		confShipper:  "a2a.write deploy:write",
	} {
		s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
			"iss": confJWTIssuer, "aud": "caddy-a2a", "sub": sub, "scope": scope,
			"iat": time.Now().Unix(), "exp": time.Now().Add(6 * time.Hour).Unix(),
		}).SignedString([]byte(confJWTSecret))
		if err != nil {
			panic(err)
		}
		confTokens[sub] = s
	}
}

// confScopeSite is the part of the conformance Caddyfile for these rows:
// the jwt block (inside auth), the limits block and the deploy skill.
const (
	confScopeJWT = `
		jwt {
			secret ` + confJWTSecret + `
			issuer ` + confJWTIssuer + `
			audience caddy-a2a
		}`
	confScopeLimits = `
	limits scope:a2a.read {
		allow_methods GetTask ListTasks
	}`
	confScopeSkill = `
		skill deploy {
			name Deploy
			description "Deploys the generated stack."
			tags ops
			requires_scopes deploy:write
		}`
)

// confSkillMessage is confMessage whose message names skill in
// metadata.iac_code.skill (agent.SkillMetadataKey).
func confSkillMessage(text, skill string) map[string]any {
	p := confMessage(text)
	p["message"].(map[string]any)["metadata"] = map[string]any{"iac_code": map[string]any{"skill": skill}}
	return p
}

// confSkillIDs returns the skill ids of a card.
func confSkillIDs(card map[string]any) []string {
	var ids []string
	skills, _ := card["skills"].([]any)
	for _, s := range skills {
		m, _ := s.(map[string]any)
		id, _ := m["id"].(string)
		ids = append(ids, id)
	}
	return ids
}

// confScopeRows are the AUTH-8 rows.
func confScopeRows() []confCase {
	na := map[string]confOutcome{bStdio: {NA: "stdio trusts its parent: no credential, hence no scopes (XPORT-4)"}}
	denied := &confError{RPC: -32050, HTTP: 403, GRPC: codes.PermissionDenied, Reason: "PERMISSION_DENIED"}
	skillDenied := *denied
	skillDenied.Meta = map[string]string{"skill": "deploy", "missingScopes": "deploy:write"}
	return []confCase{
		{
			Name: "SendMessage outside the scope's allow-list", Method: "SendMessage", Principal: confReader,
			Params: func(*confEnv) map[string]any { return confMessage("not allowed by a2a.read") },
			Want:   confOutcome{Err: denied}, Differs: na,
		},
		{
			Name: "ListTasks inside the scope's allow-list is served", Method: "ListTasks", Principal: confReader,
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				// A served list (gRPC's ProtoJSON omits an empty tasks array).
				if res == nil || res["pageSize"] == nil && res["tasks"] == nil {
					t.Fatalf("ListTasks as reader: %v, want a task list", res)
				}
			}},
			Differs: na,
		},
		{
			Name: "SendMessage to a skill without its scope", Method: "SendMessage", Principal: confDeployer,
			Params: func(*confEnv) map[string]any { return confSkillMessage("deploy it", "deploy") },
			Want:   confOutcome{Err: &skillDenied}, Differs: na,
		},
		{
			Name: "SendStreamingMessage to a skill without its scope", Method: "SendStreamingMessage", Principal: confDeployer, Stream: true,
			Params: func(*confEnv) map[string]any { return confSkillMessage("deploy it", "deploy") },
			Want:   confOutcome{Err: &skillDenied}, Differs: na,
		},
		{
			Name: "SendMessage to a skill with its scope is served", Method: "SendMessage", Principal: confShipper,
			Params: func(*confEnv) map[string]any { return confSkillMessage("deploy it", "deploy") },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				if taskOf(t, res)["id"] == nil {
					t.Fatalf("SendMessage as shipper: %v, want a task", res)
				}
			}},
			Differs: na,
		},
		{
			Name: "GetExtendedAgentCard hides the skills the caller may not use", Method: "GetExtendedAgentCard", Principal: confDeployer,
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				if ids := confSkillIDs(res); slices.Contains(ids, "deploy") {
					t.Fatalf("extended card for deployer lists skills %v, want no deploy", ids)
				}
			}},
			Differs: na,
		},
		{
			Name: "GetExtendedAgentCard lists the skills the caller may use", Method: "GetExtendedAgentCard", Principal: confShipper,
			Params: func(*confEnv) map[string]any { return map[string]any{} },
			Want: confOutcome{Check: func(t *testing.T, _ *confEnv, res map[string]any, _ []map[string]any) {
				skills, _ := res["skills"].([]any)
				for _, s := range skills {
					if m, _ := s.(map[string]any); m["id"] == "deploy" {
						if got := fmt.Sprint(m["securityRequirements"]); got != "[map[schemes:map[bearerAuth:map[list:[deploy:write]]]]]" {
							t.Fatalf("deploy securityRequirements %s", got)
						}
						return
					}
				}
				t.Fatalf("extended card for shipper lists skills %v, want deploy", confSkillIDs(res))
			}},
			Differs: na,
		},
	}
}
