package tests

import (
	"encoding/base64"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func basicHdr(u, p string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p))
}

func expect401(t *testing.T, url string, hdr map[string]string, challenges int) {
	t.Helper()
	r, b := do(t, "POST", url, hdr)
	if r.StatusCode != 401 {
		t.Fatalf("status = %d, want 401", r.StatusCode)
	}
	// POST / is JSON-RPC: a JSON-RPC error with the ErrorInfo reason
	// UNAUTHENTICATED (issue 25; TestUnauthenticatedAnswers covers the
	// other carriers).
	if !strings.Contains(string(b), `"error":{"code":-31401,"message":"Unauthorized","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo"`) ||
		!strings.Contains(string(b), `"reason":"UNAUTHENTICATED"`) || !strings.Contains(string(b), `"id":null`) || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("401 body %q type %q", b, r.Header.Get("Content-Type"))
	}
	if got := len(r.Header.Values("WWW-Authenticate")); got != challenges {
		t.Errorf("WWW-Authenticate count = %d (%q), want %d", got, r.Header.Values("WWW-Authenticate"), challenges)
	}
}

func expectPass(t *testing.T, url string, hdr map[string]string) {
	t.Helper()
	r, b := do(t, "POST", url, hdr)
	if r.StatusCode == 401 || r.StatusCode >= 500 {
		t.Fatalf("status = %d (%s), want authorised", r.StatusCode, b)
	}
}

func TestAuthMatrix(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("builder"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	gw := harness.StartGatewayWith(t, `a2a {`+cardBlock+`
		auth {
			bearer {env.TEST_TOKEN}
			basic alice wonderland
			api_key key-default
			principal ci bearer ci-token
			principal svc api_key svc-key
			principal bob basic bob `+string(hash)+`
		}
	}`, harness.Options{Env: []string{"TEST_TOKEN=tok-from-env", "IACCODE_A2A_HTTP_TOKEN=ignored-because-set"}})
	u := gw.URL + "/"

	// public routes stay public
	if r, _ := do(t, "GET", gw.URL+"/health", nil); r.StatusCode != 200 {
		t.Errorf("health behind auth: %d", r.StatusCode)
	}
	r, body := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if r.StatusCode != 200 {
		t.Fatalf("card behind auth: %d", r.StatusCode)
	}
	s := string(body)
	for _, want := range []string{
		`"bearerAuth":{"httpAuthSecurityScheme":{"scheme":"Bearer"}}`,
		`"basicAuth":{"httpAuthSecurityScheme":{"scheme":"Basic"}}`,
		`"apiKeyAuth":{"apiKeySecurityScheme":{"location":"header","name":"X-API-Key"}}`,
		`"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]}}},{"schemes":{"basicAuth":{"list":[]}}},{"schemes":{"apiKeyAuth":{"list":[]}}}]`,
		`"extendedAgentCard":true`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("card lacks %s\n%s", want, s)
		}
	}
	for _, secret := range []string{"tok-from-env", "wonderland", "key-default", "ci-token", "svc-key", "builder"} {
		if strings.Contains(s, secret) {
			t.Errorf("card leaks a credential")
		}
	}

	good := map[string]map[string]string{
		"bearer default":   {"Authorization": "Bearer tok-from-env"},
		"bearer principal": {"Authorization": "Bearer ci-token"},
		"basic plain":      {"Authorization": basicHdr("alice", "wonderland")},
		"basic bcrypt":     {"Authorization": basicHdr("bob", "builder")},
		"api key default":  {"X-API-Key": "key-default"},
		"api key svc":      {"X-Api-Key": "svc-key"},
	}
	for name, h := range good {
		t.Run("good/"+name, func(t *testing.T) { expectPass(t, u, h) })
	}
	bad := map[string]map[string]string{
		"missing":          nil,
		"bearer wrong":     {"Authorization": "Bearer nope"},
		"env token unused": {"Authorization": "Bearer ignored-because-set"},
		"basic wrong":      {"Authorization": basicHdr("alice", "nope")},
		"basic unknown":    {"Authorization": basicHdr("mallory", "wonderland")},
		"bcrypt wrong":     {"Authorization": basicHdr("bob", "nope")},
		"api key wrong":    {"X-API-Key": "nope"},
		"token as api key": {"X-API-Key": "ci-token"},
		"key as bearer":    {"Authorization": "Bearer key-default"},
	}
	for name, h := range bad {
		t.Run("bad/"+name, func(t *testing.T) { expect401(t, u, h, 3) })
	}
	if out := gw.Output(); strings.Contains(out, "tok-from-env") || strings.Contains(out, "wonderland") || strings.Contains(out, "svc-key") {
		t.Error("log output contains a secret")
	}
}

func TestAuthEnvDefaults(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {`+cardBlock+`
		auth {
		}
	}`, harness.Options{Env: []string{
		"IACCODE_A2A_HTTP_TOKEN=env-token",
		"IACCODE_A2A_API_KEY=env-key",
		"IACCODE_A2A_API_KEY_HEADER=X-Agent-Key",
		"IACCODE_A2A_BASIC_USERNAME=envuser",
		"IACCODE_A2A_BASIC_PASSWORD=envpass",
	}})
	u := gw.URL + "/"
	expectPass(t, u, map[string]string{"Authorization": "Bearer env-token"})
	expectPass(t, u, map[string]string{"X-Agent-Key": "env-key"})
	expectPass(t, u, map[string]string{"Authorization": basicHdr("envuser", "envpass")})
	expect401(t, u, map[string]string{"X-API-Key": "env-key"}, 3)
	expect401(t, u, nil, 3)
	_, body := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if !strings.Contains(string(body), `"name":"X-Agent-Key"`) || !strings.Contains(string(body), `"bearerAuth"`) || !strings.Contains(string(body), `"basicAuth"`) {
		t.Errorf("card does not advertise env schemes: %s", body)
	}
}

func TestAuthNoEnvAndOff(t *testing.T) {
	t.Parallel()
	env := harness.Options{Env: []string{"IACCODE_A2A_HTTP_TOKEN=env-token"}}
	// no_env: env ignored, no scheme -> pass-through, card without security
	gw := harness.StartGatewayWith(t, `a2a {`+cardBlock+`
		auth {
			no_env
		}
	}`, env)
	expectPass(t, gw.URL+"/", nil)
	_, body := do(t, "GET", gw.URL+"/.well-known/agent-card.json", nil)
	if strings.Contains(string(body), "securitySchemes") || strings.Contains(string(body), "extendedAgentCard") {
		t.Errorf("no_env card advertises security: %s", body)
	}
	// bearer only: one challenge
	gw2 := harness.StartGatewayWith(t, `a2a {`+cardBlock+`
		auth {
			bearer only-token
			no_env
		}
	}`, env)
	expect401(t, gw2.URL+"/", map[string]string{"Authorization": "Bearer env-token"}, 1)
	r, _ := do(t, "POST", gw2.URL+"/", nil)
	if c := r.Header.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Bearer realm=") {
		t.Errorf("challenge = %q", c)
	}
	expectPass(t, gw2.URL+"/", map[string]string{"Authorization": "Bearer only-token"})
}
