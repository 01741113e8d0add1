package tests

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// scopesIdP is a test identity provider's signing key, published to the
// gateway as a JWKS file.
type scopesIdP struct {
	key  *ecdsa.PrivateKey
	jwks string // the JWKS file's path
}

func newScopesIdP(t *testing.T) *scopesIdP {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := key.PublicKey.Bytes()
	b64 := base64.RawURLEncoding
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{
		"kty": "EC", "kid": "idp-1", "crv": "P-256", "use": "sig", "alg": "ES256",
		"x": b64.EncodeToString(raw[1:33]), "y": b64.EncodeToString(raw[33:]),
	}}})
	path := filepath.Join(t.TempDir(), "idp-jwks.json")
	if err := os.WriteFile(path, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	return &scopesIdP{key: key, jwks: path}
}

// token returns an ES256 access token of the IdP with claims added to
// iss, aud, iat and exp.
func (p *scopesIdP) token(t *testing.T, claims jwt.MapClaims) string {
	t.Helper()
	c := jwt.MapClaims{"iss": "https://idp.example/realms/agents", "aud": "caddy-a2a", "sub": "f81d4fae-opaque", "iat": time.Now().Unix(), "exp": time.Now().Add(10 * time.Minute).Unix()}
	for k, v := range claims {
		c[k] = v
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	tok.Header["kid"] = "idp-1"
	s, err := tok.SignedString(p.key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// scopesMessage is SendMessage params, naming skill in
// metadata.iac_code.skill when set.
func scopesMessage(skill string) map[string]any {
	m := map[string]any{"role": "ROLE_USER", "messageId": "m-" + time.Now().Format("150405.000000000"), "parts": []any{map[string]any{"text": "hello"}}}
	if skill != "" {
		m["metadata"] = map[string]any{"iac_code": map[string]any{"skill": skill}}
	}
	return map[string]any{"message": m, "configuration": map[string]any{"returnImmediately": true}}
}

// TestScopesJWKSE2E (AUTH-8, issue 30): with JWTs from an IdP key in a
// JWKS file and principal_claim azp, the real gateway applies limits by
// principal, by scope and by claim (exact tokens: a comma-joined scope or
// claim string selects nothing), declares the deploy skill's
// securityRequirements on the public card, refuses a message for that
// skill without deploy:write with PERMISSION_DENIED naming it, and lists
// the skill on the extended card (JSON-RPC and REST) only to callers
// holding the scope.
func TestScopesJWKSE2E(t *testing.T) {
	t.Parallel()
	idp := newScopesIdP(t)
	gw := harness.StartGateway(t, `a2a {
	card {
		name scopes
		skill chat {
			name Chat
			description "Talks about the stack."
			tags chat
		}
		skill deploy {
			name Deploy
			description "Deploys the generated stack."
			tags ops
			requires_scopes deploy:write
		}
	}
	auth {
		no_env
		jwt {
			jwks_file `+idp.jwks+`
			issuer https://idp.example/realms/agents
			audience caddy-a2a
			principal_claim azp
		}
	}
	limits billing-svc {
		allow_methods ListTasks
	}
	limits scope:a2a.read {
		allow_methods GetTask ListTasks GetExtendedAgentCard
	}
	limits claim:groups=auditors {
		allow_methods ListTasks
	}
}`)
	pub := string(harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, http.MethodGet, "").Raw)
	if want := `"tags":["ops"],"securityRequirements":[{"schemes":{"bearerAuth":{"list":["deploy:write"]}}}]`; !strings.Contains(pub, want) {
		t.Errorf("public card lacks the deploy skill's %s:\n%s", want, pub)
	}
	if strings.Count(pub, `"securityRequirements"`) != 2 {
		t.Errorf("public card: want the card's and the deploy skill's securityRequirements only:\n%s", pub)
	}

	call := func(tok, method string, params any) (int, map[string]any) {
		t.Helper()
		r := harness.At(gw.URL, harness.Bearer(tok)).Call(t, method, params)
		var doc struct {
			Error map[string]any `json:"error"`
		}
		_ = json.Unmarshal(r.Raw, &doc)
		return r.StatusCode, doc.Error
	}
	type step struct {
		name   string
		claims jwt.MapClaims
		method string
		params any
		status int
	}
	list := map[string]any{}
	for _, s := range []step{
		{"principal rule by azp", jwt.MapClaims{"azp": "billing-svc", "scope": "a2a.read"}, "SendMessage", scopesMessage(""), 403},
		{"principal rule by azp allows", jwt.MapClaims{"azp": "billing-svc"}, "ListTasks", list, 200},
		{"no azp claim", jwt.MapClaims{}, "ListTasks", list, 401},
		{"scope a2a.read denies sends", jwt.MapClaims{"azp": "reader-svc", "scope": "openid a2a.read"}, "SendMessage", scopesMessage(""), 403},
		{"scope a2a.read lists", jwt.MapClaims{"azp": "reader-svc", "scp": []any{"a2a.read"}}, "ListTasks", list, 200},
		{"comma-joined scope selects nothing", jwt.MapClaims{"azp": "odd-svc", "scope": "a2a.read,a2a.write"}, "SendMessage", scopesMessage(""), 200},
		{"array claim selects", jwt.MapClaims{"azp": "audit-svc", "groups": []any{"staff", "auditors"}}, "SendMessage", scopesMessage(""), 403},
		{"comma-joined claim selects nothing", jwt.MapClaims{"azp": "audit-svc", "groups": "staff,auditors"}, "SendMessage", scopesMessage(""), 200},
		{"skill without its scope", jwt.MapClaims{"azp": "dev-svc", "scope": "a2a.write"}, "SendMessage", scopesMessage("deploy"), 403},
		{"skill with its scope", jwt.MapClaims{"azp": "ops-svc", "scope": "a2a.write deploy:write"}, "SendMessage", scopesMessage("deploy"), 200},
		{"other skill needs no scope", jwt.MapClaims{"azp": "dev-svc"}, "SendMessage", scopesMessage("chat"), 200},
	} {
		status, rerr := call(idp.token(t, s.claims), s.method, s.params)
		if status != s.status {
			t.Errorf("%s: %s gave HTTP %d %v, want %d", s.name, s.method, status, rerr, s.status)
			continue
		}
		if s.status == 200 && rerr != nil {
			t.Errorf("%s: error %v", s.name, rerr)
		}
		if s.status == 403 && (rerr == nil || rerr["code"] != float64(-32050)) {
			t.Errorf("%s: error %v, want -32050 PERMISSION_DENIED", s.name, rerr)
		}
	}
	// The refusal names the missing scope, in the message and ErrorInfo.
	_, rerr := call(idp.token(t, jwt.MapClaims{"azp": "dev-svc", "scope": "a2a.write"}), "SendMessage", scopesMessage("deploy"))
	if b, _ := json.Marshal(rerr); !strings.Contains(string(rerr["message"].(string)), "deploy:write") || !strings.Contains(string(b), `"missingScopes":"deploy:write"`) || !strings.Contains(string(b), `"reason":"PERMISSION_DENIED"`) {
		t.Errorf("skill refusal %s, want PERMISSION_DENIED naming deploy:write", b)
	}

	skills := func(raw []byte) []string {
		var c struct {
			Result *struct {
				Skills []struct{ ID string } `json:"skills"`
			} `json:"result"`
			Skills []struct{ ID string } `json:"skills"`
		}
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatalf("extended card: %v: %s", err, raw)
		}
		list := c.Skills
		if c.Result != nil {
			list = c.Result.Skills
		}
		var ids []string
		for _, s := range list {
			ids = append(ids, s.ID)
		}
		return ids
	}
	for _, c := range []struct {
		claims jwt.MapClaims
		want   []string
	}{
		{jwt.MapClaims{"azp": "dev-svc", "scope": "a2a.write"}, []string{"chat"}},
		{jwt.MapClaims{"azp": "reader-svc", "scope": "a2a.read deploy:write"}, []string{"chat", "deploy"}},
	} {
		tok := idp.token(t, c.claims)
		if got := skills(harness.At(gw.URL, harness.Bearer(tok)).Call(t, "GetExtendedAgentCard", map[string]any{}).Raw); !slices.Equal(got, c.want) {
			t.Errorf("JSON-RPC extended card for %v: skills %v, want %v", c.claims, got, c.want)
		}
		r := harness.At(gw.URL+"/extendedAgentCard", harness.Bearer(tok), harness.Header("A2A-Version", "1.0")).Do(t, http.MethodGet, "")
		if got := skills(r.Raw); r.StatusCode != 200 || !slices.Equal(got, c.want) {
			t.Errorf("REST extended card for %v: HTTP %d skills %v, want %v", c.claims, r.StatusCode, got, c.want)
		}
	}
}
