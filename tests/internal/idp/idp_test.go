package idp

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// The provider serves discovery naming itself, and client credentials
// tokens signed by its current key with the client's audience and scopes;
// after a rotation new tokens carry the new kid.
func TestProviderIssuesJWTs(t *testing.T) {
	p := Start(t, Client{ID: "svc", Secret: "s3cret", Audience: []string{"gw"}})
	resp, err := http.Get(p.Issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
		Token   string `json:"token_endpoint"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&md)
	resp.Body.Close()
	if md.Issuer != p.Issuer || md.Token != p.TokenURL || !strings.HasPrefix(md.JWKSURI, p.Issuer) {
		t.Fatalf("discovery: %+v", md)
	}
	check := func(tok, kid string) {
		t.Helper()
		parsed, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return p.PublicKey(), nil },
			jwt.WithAudience("gw"), jwt.WithIssuer(p.Issuer), jwt.WithValidMethods([]string{"RS256"}))
		if err != nil {
			t.Fatalf("token: %v", err)
		}
		c := parsed.Claims.(jwt.MapClaims)
		if parsed.Header["kid"] != kid || c["sub"] != "svc" || c["scope"] != "a2a.read a2a.write" {
			t.Fatalf("token header %v claims %v", parsed.Header, c)
		}
	}
	check(p.Token(t, "svc", "s3cret", "a2a.read", "a2a.write"), p.KeyID())
	old := p.KeyID()
	if nk := p.Rotate(t, true); nk == old {
		t.Fatal("rotation kept the key id")
	}
	check(p.Token(t, "svc", "s3cret", "a2a.read", "a2a.write"), p.KeyID())
}
