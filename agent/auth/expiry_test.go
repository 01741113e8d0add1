package auth

import (
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TestCheckExpiry (AUTH-10, issue 26.2): a JWT's result carries its
// expiry, exp plus the clock skew, so a long-lived carrier can end its
// access then; static tokens have none.
func TestCheckExpiry(t *testing.T) {
	a, _, err := New(Config{Token: "static-token-0123456789", JWT: &JWT{Secret: testSecret, Issuer: "https://issuer.example.com", Audience: "a2a-gateway", ClockSkew: Duration(time.Second)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	exp := time.Now().Add(3 * time.Second).Truncate(time.Second)
	tok := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["exp"] = exp.Unix() }))
	res, ok := a.Check(bearerReq(tok))
	if !ok || res.Principal != "alice" || !res.Expires.Equal(exp.Add(time.Second)) {
		t.Fatalf("JWT: %+v %v, want alice until exp+1s (%v)", res, ok, exp.Add(time.Second))
	}
	res, ok = a.Check(bearerReq("static-token-0123456789"))
	if !ok || res.Principal != DefaultPrincipal || !res.Expires.IsZero() {
		t.Fatalf("static token: %+v %v, want no expiry", res, ok)
	}
	if p, ok := a.Authenticate(bearerReq(tok)); !ok || p != "alice" {
		t.Fatalf("Authenticate: %q %v", p, ok)
	}
}
