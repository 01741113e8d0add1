package auth

import (
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"
)

// AUTH-9 AND requirement (mtls require_with_bearer): a request needs a
// verified certificate the rules accept AND a bearer credential; the
// principal is the bearer's; the earlier expiry wins; Basic and API keys
// cannot be combined with it and a bearer credential is required.
func TestMTLSRequireWithBearer(t *testing.T) {
	a, _, err := New(Config{NoEnv: true, Principals: []Principal{{Name: "alice", Token: "alice-0123456789abcdef"}},
		MTLS: &MTLS{PrincipalFrom: "cn", RequireWithBearer: true, Principals: []MTLSPrincipal{{Name: "svc", Identity: "svc-cn"}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := a.Schemes(); !s.MTLS || !s.MTLSWithBearer || !s.Bearer {
		t.Fatalf("schemes %+v", s)
	}
	check := func(cs *tls.ConnectionState, authz string) (Result, bool) {
		r := httptest.NewRequest("POST", "https://a.example/", nil)
		r.TLS = cs
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		return a.Check(r)
	}
	mapped := mtlsState(true, "", "", "", "svc-cn")
	if res, ok := check(mapped, "Bearer alice-0123456789abcdef"); !ok || res.Principal != "alice" || !res.Expires.Equal(mapped.VerifiedChains[0][0].NotAfter) {
		t.Errorf("certificate and bearer: %+v %v, want alice until the certificate's notAfter", res, ok)
	}
	for name, c := range map[string]struct {
		cs    *tls.ConnectionState
		authz string
	}{
		"certificate only":        {mapped, ""},
		"bearer only":             {nil, "Bearer alice-0123456789abcdef"},
		"unmapped certificate":    {mtlsState(true, "", "", "", "other"), "Bearer alice-0123456789abcdef"},
		"unverified certificate":  {mtlsState(false, "", "", "", "svc-cn"), "Bearer alice-0123456789abcdef"},
		"wrong bearer":            {mapped, "Bearer wrong-0123456789abcdef"},
		"Basic with certificate":  {mapped, "Basic YWxpY2U6eA=="},
		"bearer with scheme only": {mapped, "Bearer"},
	} {
		if res, ok := check(c.cs, c.authz); ok {
			t.Errorf("%s: accepted as %q", name, res.Principal)
		}
	}
	for name, cfg := range map[string]Config{
		"no bearer": {NoEnv: true, MTLS: &MTLS{RequireWithBearer: true}},
		"basic":     {NoEnv: true, Token: "tok-0123456789abcdef", Basic: &Basic{Username: "u", Password: "p-0123456789abcdef"}, MTLS: &MTLS{RequireWithBearer: true}},
		"api key":   {NoEnv: true, Token: "tok-0123456789abcdef", APIKey: "key-0123456789abcdef", MTLS: &MTLS{RequireWithBearer: true}},
	} {
		if _, _, err := New(cfg, Options{}); err == nil || !strings.Contains(err.Error(), "require_with_bearer") {
			t.Errorf("%s: %v, want a require_with_bearer error", name, err)
		}
	}
}
