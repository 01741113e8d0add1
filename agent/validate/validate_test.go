package validate

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// goodCard is a clean v1.0 card: no findings at all.
const goodCard = `{
  "name": "GeoSpatial Route Planner",
  "description": "Plans driving routes with live traffic and builds custom maps.",
  "supportedInterfaces": [{"url": "https://georoute.example.com/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
  "provider": {"organization": "Example Geo Services Inc.", "url": "https://www.examplegeoservices.com"},
  "version": "1.2.0",
  "documentationUrl": "https://docs.example.com/agent",
  "capabilities": {"streaming": true, "pushNotifications": false, "extendedAgentCard": false},
  "securitySchemes": {"google": {"openIdConnectSecurityScheme": {"openIdConnectUrl": "https://accounts.google.com/.well-known/openid-configuration"}}},
  "securityRequirements": [{"schemes": {"google": {"list": ["openid", "profile"]}}}],
  "defaultInputModes": ["application/json", "text/plain"],
  "defaultOutputModes": ["application/json", "image/png"],
  "skills": [{"id": "route-optimizer-traffic", "name": "Traffic-Aware Route Optimizer",
    "description": "Computes the best driving route using real-time traffic.", "tags": ["maps", "routing", "traffic"]}],
  "iconUrl": "https://georoute.example.com/icon.png"
}`

func mutate(t *testing.T, f func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(goodCard), &m); err != nil {
		t.Fatal(err)
	}
	f(m)
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func obj(m map[string]any, k string) map[string]any   { return m[k].(map[string]any) }
func first(m map[string]any, k string) map[string]any { return m[k].([]any)[0].(map[string]any) }

// withoutClientInfo drops the info finding that a2a-go <= v2.3.1 cannot
// read ProtoJSON securityRequirements (TestKnownClients checks it).
func withoutClientInfo(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Severity != Info || !strings.HasPrefix(f.Message, "a2a-go") {
			out = append(out, f)
		}
	}
	return out
}

// The good card has no findings but the a2a-go note on its (right)
// ProtoJSON securityRequirements.
func TestGoodCardHasNoFindings(t *testing.T) {
	fs := Card([]byte(goodCard), Options{Production: true})
	if len(fs) != 1 || len(withoutClientInfo(fs)) != 0 {
		t.Fatalf("good card: %v", fs)
	}
}

// The seed's own example card passes with warnings only; its `security`
// field is a warning whose fix shows the securityRequirements shape.
func TestSeedExampleCardPasses(t *testing.T) {
	raw, err := os.ReadFile("testdata/seed_example.json")
	if err != nil {
		t.Fatal(err)
	}
	fs := Card(raw, Options{Production: true})
	if HasErrors(fs) {
		t.Fatalf("seed example has errors: %v", fs)
	}
	if len(fs) != 1 || fs[0].Pointer != "/security" || fs[0].Severity != Warning ||
		!strings.Contains(fs[0].Fix, `"securityRequirements":[{"schemes":{"oauth2":{"list":["agent.invoke"]}}}]`) {
		t.Fatalf("want exactly the /security warning with the v1.0 shape, got %v", fs)
	}
}

func TestRules(t *testing.T) {
	cases := []struct {
		name string
		mod  func(m map[string]any)
		prod bool
		want Finding // exactly this one finding (message checked by substring)
	}{
		{"missing name", func(m map[string]any) { delete(m, "name") }, false, Finding{Error, "/name", "required field name", ""}},
		{"missing version", func(m map[string]any) { delete(m, "version") }, false, Finding{Error, "/version", "required field version", ""}},
		{"missing capabilities", func(m map[string]any) { delete(m, "capabilities") }, false, Finding{Error, "/capabilities", "required field capabilities", ""}},
		{"missing input modes", func(m map[string]any) { delete(m, "defaultInputModes") }, false, Finding{Error, "/defaultInputModes", "required field defaultInputModes", ""}},
		{"missing output modes", func(m map[string]any) { m["defaultOutputModes"] = []any{} }, false, Finding{Error, "/defaultOutputModes", "required field defaultOutputModes", ""}},
		{"missing interfaces", func(m map[string]any) { delete(m, "supportedInterfaces") }, false, Finding{Error, "/supportedInterfaces", "required field supportedInterfaces", ""}},
		{"missing skills", func(m map[string]any) { delete(m, "skills") }, false, Finding{Error, "/skills", "required field skills", ""}},
		{"skill without tags", func(m map[string]any) { delete(first(m, "skills"), "tags") }, false, Finding{Error, "/skills/0/tags", "no tags", ""}},
		{"skill without id", func(m map[string]any) { delete(first(m, "skills"), "id") }, false, Finding{Error, "/skills/0/id", "skill id", ""}},
		{"skill without name", func(m map[string]any) { first(m, "skills")["name"] = "" }, false, Finding{Error, "/skills/0/name", "skill name", ""}},
		{"skill without description", func(m map[string]any) { delete(first(m, "skills"), "description") }, false, Finding{Error, "/skills/0/description", "skill description", ""}},
		{"short skill description", func(m map[string]any) { first(m, "skills")["description"] = "Routes." }, false, Finding{Warning, "/skills/0/description", "shorter than 20", ""}},
		{"short description", func(m map[string]any) { m["description"] = "Plans routes." }, false, Finding{Warning, "/description", "shorter than 20", ""}},
		{"generic name", func(m map[string]any) { m["name"] = "AI Assistant" }, false, Finding{Warning, "/name", "generic", ""}},
		{"v0 url", func(m map[string]any) { m["url"] = "https://georoute.example.com/a2a/v1" }, false, Finding{Warning, "/url", "supportedInterfaces/0/url", ""}},
		{"v0 preferredTransport", func(m map[string]any) { m["preferredTransport"] = "JSONRPC" }, false, Finding{Warning, "/preferredTransport", "v0.x", ""}},
		{"v0 additionalInterfaces", func(m map[string]any) { m["additionalInterfaces"] = []any{} }, false, Finding{Warning, "/additionalInterfaces", "v0.x", ""}},
		{"v0 protocolVersion", func(m map[string]any) { m["protocolVersion"] = "0.3.0" }, false, Finding{Warning, "/protocolVersion", "protocolVersion", ""}},
		{"v0 supportsAuthenticatedExtendedCard", func(m map[string]any) { m["supportsAuthenticatedExtendedCard"] = true }, false, Finding{Warning, "/supportsAuthenticatedExtendedCard", "capabilities/extendedAgentCard", ""}},
		{"v0 provider.name", func(m map[string]any) {
			p := obj(m, "provider")
			p["name"] = p["organization"]
			delete(p, "organization")
		}, false, Finding{Error, "/provider/name", "provider.organization", ""}},
		{"v0 stateTransitionHistory", func(m map[string]any) { obj(m, "capabilities")["stateTransitionHistory"] = true }, false, Finding{Warning, "/capabilities/stateTransitionHistory", "removed", ""}},
		{"provider without url", func(m map[string]any) { delete(obj(m, "provider"), "url") }, false, Finding{Error, "/provider/url", "required when provider", ""}},
		{"token in url", func(m map[string]any) { m["documentationUrl"] = "https://docs.example.com/agent?access_token=abc" }, false, Finding{Error, "/documentationUrl", "credential", ""}},
		{"password in url", func(m map[string]any) { m["iconUrl"] = "https://user:hunter2@georoute.example.com/icon.png" }, false, Finding{Error, "/iconUrl", "user credentials", ""}},
		{"api key member", func(m map[string]any) {
			obj(m, "capabilities")["extensions"] = []any{map[string]any{"uri": "urn:x", "params": map[string]any{"apiKey": "k-123"}}}
		}, false, Finding{Error, "/capabilities/extensions/0/params/apiKey", "credential", ""}},
		{"jwt in a description", func(m map[string]any) {
			first(m, "skills")["examples"] = []any{"use eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"}
		}, false, Finding{Error, "/skills/0/examples/0", "token", ""}},
		{"undeclared scheme", func(m map[string]any) {
			m["securityRequirements"] = []any{map[string]any{"schemes": map[string]any{"google": map[string]any{}, "apikey": map[string]any{}}}}
		}, false, Finding{Error, "/securityRequirements/0", `"apikey"`, ""}},
		{"schemes without requirements", func(m map[string]any) { delete(m, "securityRequirements") }, false, Finding{Warning, "/securitySchemes", "no securityRequirements", ""}},
		{"bad scheme shape", func(m map[string]any) {
			m["securitySchemes"] = map[string]any{"google": map[string]any{"type": "openIdConnect", "openIdConnectUrl": "https://x.example.com"}}
		}, false, Finding{Error, "/securitySchemes/google", "exactly one member", ""}},
		{"http url", func(m map[string]any) { m["iconUrl"] = "http://georoute.example.com/icon.png" }, false, Finding{Warning, "/iconUrl", "HTTPS", ""}},
		{"http url in production", func(m map[string]any) { first(m, "supportedInterfaces")["url"] = "http://georoute.example.com/a2a" }, true, Finding{Error, "/supportedInterfaces/0/url", "HTTPS", ""}},
		{"bad binding", func(m map[string]any) { first(m, "supportedInterfaces")["protocolBinding"] = "REST" }, false, Finding{Error, "/supportedInterfaces/0/protocolBinding", "REST", ""}},
		{"missing protocolVersion", func(m map[string]any) { delete(first(m, "supportedInterfaces"), "protocolVersion") }, false, Finding{Error, "/supportedInterfaces/0/protocolVersion", "missing", ""}},
		{"unverifiable signature", func(m map[string]any) {
			m["signatures"] = []any{map[string]any{"protected": "eyJhbGciOiJub25lIn0", "signature": "AA"}}
		}, false, Finding{Error, "/signatures/0/protected", "none", ""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := Card(mutate(t, tc.mod), Options{Production: tc.prod})
			var keep []Finding
			for _, f := range fs {
				if f.Severity != Info {
					keep = append(keep, f)
				}
			}
			if len(keep) != 1 {
				t.Fatalf("want exactly one finding %v, got %v", tc.want, keep)
			}
			f := keep[0]
			if f.Severity != tc.want.Severity || f.Pointer != tc.want.Pointer || !strings.Contains(f.Message, tc.want.Message) || f.Fix == "" {
				t.Fatalf("want %s %s ~%q (with a fix), got %v", tc.want.Severity, tc.want.Pointer, tc.want.Message, f)
			}
		})
	}
}

func TestSignatureRule(t *testing.T) {
	secret := []byte(strings.Repeat("k", 32))
	signer, _ := jws.NewHMACSigner("k1", secret)
	var c a2a.AgentCard
	if err := json.Unmarshal([]byte(goodCard), &c); err != nil {
		t.Fatal(err)
	}
	if err := jws.SignCard(&c, signer); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(c)
	ks := &jws.KeySet{}
	_ = ks.AddSecret("k1", secret)
	v := &jws.Verifier{Keys: ks}
	if fs := withoutClientInfo(Card(raw, Options{Verifier: v})); len(fs) != 0 {
		t.Fatalf("signed card: %v", fs)
	}
	if fs := withoutClientInfo(Card(raw, Options{})); len(fs) != 1 || fs[0].Severity != Info {
		t.Fatalf("signed card without keys: want one info finding, got %v", fs)
	}
	c.Version = "1.2.1" // changed after signing
	raw, _ = json.Marshal(c)
	fs := withoutClientInfo(Card(raw, Options{Verifier: v}))
	if len(fs) != 1 || fs[0].Severity != Error || fs[0].Pointer != "/signatures/0" {
		t.Fatalf("modified signed card: %v", fs)
	}
}

func TestNotJSON(t *testing.T) {
	for _, in := range []string{"", "[]", "{", "null"} {
		if fs := Card([]byte(in), Options{}); !HasErrors(fs) {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzCard(f *testing.F) {
	f.Add([]byte(goodCard))
	f.Add([]byte(`{"security":[{"x":["a"]}],"securitySchemes":{"x":1},"skills":[1,{"tags":"x"}],"supportedInterfaces":[null,{"url":5}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = Card(data, Options{Verifier: &jws.Verifier{}})
	})
}
