package auth

import (
	"slices"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// newScopeAuth returns an authenticator taking HS256 JWTs (testSecret)
// and the static token "static-token".
func newScopeAuth(t *testing.T, principalClaim string) *Authenticator {
	t.Helper()
	a, _, err := New(Config{Token: "static-token", JWT: &JWT{
		Secret: testSecret, Issuer: "https://issuer.example.com", Audience: "a2a-gateway", PrincipalClaim: principalClaim,
	}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestJWTScopes: `scope` is a string of tokens separated by single
// spaces, `scp` an array of whole tokens or such a string; both are read
// and merged without repeats; a token with a tab, quote or control
// character is dropped whole, never split further, and an array element
// with a space grants nothing (AUTH-8).
func TestJWTScopes(t *testing.T) {
	a := newScopeAuth(t, "")
	cases := []struct {
		name string
		mod  func(jwt.MapClaims)
		want []string
	}{
		{"scope string", func(c jwt.MapClaims) { c["scope"] = "a2a.read  a2a.write deploy:write" }, []string{"a2a.read", "a2a.write", "deploy:write"}},
		{"scp array", func(c jwt.MapClaims) { c["scp"] = []any{"a2a.read", "a2a.write a2a.admin", 7, "x"} }, []string{"a2a.read", "x"}},
		{"scp string (Entra)", func(c jwt.MapClaims) { c["scp"] = "a2a.read a2a.write" }, []string{"a2a.read", "a2a.write"}},
		{"both merged", func(c jwt.MapClaims) { c["scope"] = "a b"; c["scp"] = []any{"b", "c"} }, []string{"a", "b", "c"}},
		{"comma is part of a token", func(c jwt.MapClaims) { c["scope"] = "a2a.read,a2a.write" }, []string{"a2a.read,a2a.write"}},
		{"tab, quote and newline drop the token", func(c jwt.MapClaims) { c["scope"] = "a2a.read\ta2a.write x\"y ok z\nw" }, []string{"ok"}},
		{"scope not a string", func(c jwt.MapClaims) { c["scope"] = []any{"a2a.read"} }, nil},
		{"none", nil, nil},
	}
	for _, tc := range cases {
		res, ok := a.Check(bearerReq(signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(tc.mod))))
		if !ok {
			t.Errorf("%s: refused", tc.name)
			continue
		}
		if !slices.Equal(res.Scopes, tc.want) {
			t.Errorf("%s: scopes %q, want %q", tc.name, res.Scopes, tc.want)
		}
	}
	if res, ok := a.Check(bearerReq("static-token")); !ok || res.Scopes != nil || res.Claims != nil {
		t.Errorf("static token: %+v %v, want no scopes and no claims", res, ok)
	}
}

// TestJWTClaimValues: claims read as text for limits' claim selectors:
// strings, booleans, numbers and arrays of them; objects are left out
// (AUTH-8).
func TestJWTClaimValues(t *testing.T) {
	a := newScopeAuth(t, "")
	tok := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) {
		c["groups"] = []any{"ops", "dev", true, map[string]any{"x": 1}}
		c["email_verified"] = true
		c["tier"] = 3
		c["realm_access"] = map[string]any{"roles": []any{"admin"}}
		c["team"] = "Ops Team"
	}))
	res, ok := a.Check(bearerReq(tok))
	if !ok {
		t.Fatal("refused")
	}
	for name, want := range map[string][]string{
		"groups": {"ops", "dev", "true"}, "email_verified": {"true"}, "tier": {"3"}, "team": {"Ops Team"},
		"sub": {"alice"}, "aud": {"a2a-gateway"}, "realm_access": nil, "missing": nil,
	} {
		if got := res.ClaimValues(name); !slices.Equal(got, want) {
			t.Errorf("claim %s = %q, want %q", name, got, want)
		}
	}
}

// TestJWTPrincipalClaim: principal_claim picks the claim that names the
// principal (azp for service tokens); a token without it, or with a value
// that is no valid name, is refused; it still cannot name a configured
// principal; a malformed principal_claim is a config error (AUTH-7, AUTH-8).
func TestJWTPrincipalClaim(t *testing.T) {
	a := newScopeAuth(t, "azp")
	tok := func(mod func(jwt.MapClaims)) string {
		return signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(mod))
	}
	if res, ok := a.Check(bearerReq(tok(func(c jwt.MapClaims) { c["azp"] = "billing-service"; c["scope"] = "a2a.read" }))); !ok || res.Principal != "billing-service" || !slices.Equal(res.Scopes, []string{"a2a.read"}) {
		t.Errorf("azp token: %+v %v, want principal billing-service", res, ok)
	}
	for name, mod := range map[string]func(jwt.MapClaims){
		"no azp (sub is not used)":           nil,
		"azp with a space":                   func(c jwt.MapClaims) { c["azp"] = "a b" },
		"azp not a string":                   func(c jwt.MapClaims) { c["azp"] = []any{"svc"} },
		"azp names the configured principal": func(c jwt.MapClaims) { c["azp"] = DefaultPrincipal },
	} {
		if res, ok := a.Check(bearerReq(tok(mod))); ok {
			t.Errorf("%s: accepted as %q", name, res.Principal)
		}
	}
	if res, ok := newScopeAuth(t, "").Check(bearerReq(tok(nil))); !ok || res.Principal != "alice" {
		t.Errorf("default principal claim: %+v %v, want sub alice", res, ok)
	}
	for _, bad := range []string{"a b", "x\x00"} {
		if _, _, err := New(Config{JWT: &JWT{Secret: testSecret, PrincipalClaim: bad}}, Options{}); err == nil {
			t.Errorf("principal_claim %q accepted", bad)
		}
	}
}

// TestCheckHeadersIdentity: credentials outside an HTTP request (Redis
// Streams) carry the same scopes (AUTH-8).
func TestCheckHeadersIdentity(t *testing.T) {
	a := newScopeAuth(t, "")
	tok := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["scope"] = "a2a.read" }))
	res, ok := a.CheckHeaders(t.Context(), map[string]string{"authorization": "Bearer " + tok})
	if !ok || res.Principal != "alice" || !slices.Equal(res.Scopes, []string{"a2a.read"}) {
		t.Errorf("CheckHeaders: %+v %v", res, ok)
	}
}
