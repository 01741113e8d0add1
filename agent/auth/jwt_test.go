package auth

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var b64url = base64.RawURLEncoding

const testSecret = "0123456789abcdef0123456789abcdef"

func claims(mod func(jwt.MapClaims)) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": "https://issuer.example.com",
		"aud": "a2a-gateway",
		"sub": "alice",
		"exp": now.Add(5 * time.Minute).Unix(),
		"nbf": now.Add(-time.Minute).Unix(),
		"iat": now.Add(-time.Minute).Unix(),
	}
	if mod != nil {
		mod(c)
	}
	return c
}

func signTok(t *testing.T, m jwt.SigningMethod, kid string, key any, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, c)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func bearerReq(tok string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// AUTH-3: only the valid token passes; expired, wrong issuer/audience,
// wrong key, alg none and HS256 signed with a public key all fail.
func TestJWTBearerHS256AndJWKS(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	edPub, edKey, _ := ed25519.GenerateKey(rand.Reader)
	otherEC, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecRaw, _ := ecKey.PublicKey.Bytes()
	jwks := map[string]any{"keys": []any{
		map[string]any{"kty": "RSA", "kid": "rsa-1", "n": b64url.EncodeToString(rsaKey.N.Bytes()), "e": "AQAB"},
		map[string]any{"kty": "EC", "kid": "ec-1", "crv": "P-256", "x": b64url.EncodeToString(ecRaw[1:33]), "y": b64url.EncodeToString(ecRaw[33:])},
		map[string]any{"kty": "OKP", "kid": "ed-1", "crv": "Ed25519", "x": b64url.EncodeToString(edPub)},
	}}
	jb, _ := json.Marshal(jwks)
	dir := t.TempDir()
	jwksPath := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwksPath, jb, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TEST_JWT_SECRET", testSecret)
	replace := func(s string) string {
		return strings.ReplaceAll(s, "{env.TEST_JWT_SECRET}", os.Getenv("TEST_JWT_SECRET"))
	}
	a, warns, err := New(Config{JWT: &JWT{
		Secret: "{env.TEST_JWT_SECRET}", JWKSFile: jwksPath,
		Issuer: "https://issuer.example.com", Audience: "a2a-gateway",
	}}, Options{Replace: replace})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %v", warns)
	}
	s := a.Schemes()
	if !s.Bearer || !s.JWT {
		t.Fatalf("schemes %+v: bearer JWT not enabled", s)
	}
	rsaPubPEM := func() []byte {
		der, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
		return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	}()
	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, claims(nil)).SignedString(jwt.UnsafeAllowNoneSignatureType)

	cases := []struct {
		name string
		tok  string
		ok   bool
	}{
		{"hs256 valid", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(nil)), true},
		{"rs256 valid", signTok(t, jwt.SigningMethodRS256, "rsa-1", rsaKey, claims(nil)), true},
		{"es256 valid", signTok(t, jwt.SigningMethodES256, "ec-1", ecKey, claims(nil)), true},
		{"eddsa valid", signTok(t, jwt.SigningMethodEdDSA, "ed-1", edKey, claims(nil)), true},
		{"expired", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-2 * time.Minute).Unix() })), false},
		{"no exp", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { delete(c, "exp") })), false},
		{"not yet valid", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(10 * time.Minute).Unix() })), false},
		{"wrong issuer", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })), false},
		{"wrong audience", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["aud"] = "other" })), false},
		{"wrong hs256 secret", signTok(t, jwt.SigningMethodHS256, "", []byte(strings.Repeat("x", 32)), claims(nil)), false},
		{"wrong ec key", signTok(t, jwt.SigningMethodES256, "ec-1", otherEC, claims(nil)), false},
		{"es256 header naming the rsa kid", signTok(t, jwt.SigningMethodES256, "rsa-1", ecKey, claims(nil)), false},
		{"alg none", noneTok, false},
		{"hs256 signed with the rsa public key", signTok(t, jwt.SigningMethodHS256, "rsa-1", rsaPubPEM, claims(nil)), false},
		{"hs256 signed with the ec jwk x", signTok(t, jwt.SigningMethodHS256, "ec-1", ecRaw, claims(nil)), false},
		{"subject with spaces", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["sub"] = "a b" })), false},
		{"no subject", signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { delete(c, "sub") })), false},
		{"garbage", "a.b.c", false},
	}
	for _, tc := range cases {
		p, ok := a.Authenticate(bearerReq(tc.tok))
		if ok != tc.ok {
			t.Errorf("%s: ok=%v, want %v", tc.name, ok, tc.ok)
		}
		if ok && p != "alice" {
			t.Errorf("%s: principal %q, want alice (the sub claim)", tc.name, p)
		}
	}
}

func TestJWTWithinSkewAndStaticTokensFirst(t *testing.T) {
	a, _, err := New(Config{Token: "static-token", JWT: &JWT{Secret: testSecret, Issuer: "i", Audience: "a", ClockSkew: Duration(time.Minute)}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := a.Authenticate(bearerReq("static-token")); !ok || p != DefaultPrincipal {
		t.Errorf("static token: %q %v", p, ok)
	}
	tok := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), jwt.MapClaims{
		"iss": "i", "aud": "a", "sub": "bob", "exp": time.Now().Add(-30 * time.Second).Unix(),
	})
	if p, ok := a.Authenticate(bearerReq(tok)); !ok || p != "bob" {
		t.Errorf("token expired within the skew: %q %v", p, ok)
	}
}

func TestJWTRemoteJWKS(t *testing.T) {
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	raw, _ := ecKey.PublicKey.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": []any{map[string]any{
			"kty": "EC", "kid": "k1", "crv": "P-256", "x": b64url.EncodeToString(raw[1:33]), "y": b64url.EncodeToString(raw[33:]),
		}}})
	}))
	defer srv.Close()
	a, warns, err := New(Config{JWT: &JWT{JWKSURL: srv.URL, Issuer: "i", Audience: "a"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "http") {
		t.Errorf("want a plain-http warning, got %v", warns)
	}
	good := signTok(t, jwt.SigningMethodES256, "k1", ecKey, jwt.MapClaims{"iss": "i", "aud": "a", "sub": "carol", "exp": time.Now().Add(time.Minute).Unix()})
	if p, ok := a.Authenticate(bearerReq(good)); !ok || p != "carol" {
		t.Errorf("remote jwks: %q %v", p, ok)
	}
	// Without a secret, HS256 is not an accepted algorithm at all.
	hs := signTok(t, jwt.SigningMethodHS256, "k1", raw, jwt.MapClaims{"iss": "i", "aud": "a", "sub": "carol", "exp": time.Now().Add(time.Minute).Unix()})
	if _, ok := a.Authenticate(bearerReq(hs)); ok {
		t.Error("HS256 accepted with only a JWKS configured")
	}
}

func TestJWTConfigErrors(t *testing.T) {
	for name, c := range map[string]*JWT{
		"nothing":  {},
		"short":    {Secret: "short"},
		"bad alg":  {Secret: testSecret, Algorithms: []string{"none"}},
		"bad skew": {Secret: testSecret, ClockSkew: Duration(time.Hour)},
		"bad url":  {JWKSURL: "ftp://x"},
		"no file":  {JWKSFile: "/nonexistent/jwks.json"},
	} {
		_, _, err := New(Config{JWT: c}, Options{})
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), "/nonexistent") {
			t.Errorf("%s: error leaks a secret or path: %v", name, err)
		}
	}
	var d Duration
	if err := json.Unmarshal([]byte(`"45s"`), &d); err != nil || time.Duration(d) != 45*time.Second {
		t.Errorf("duration: %v %v", d, err)
	}
}

// TestJWTCannotClaimConfiguredPrincipal: a valid token whose sub names a
// principal configured with a static credential is refused, so it cannot
// reach that principal's tasks (AUTH-3, AUTH-4).
func TestJWTCannotClaimConfiguredPrincipal(t *testing.T) {
	a, _, err := New(Config{Token: "static-token", JWT: &JWT{Secret: testSecret, Issuer: "https://issuer.example.com", Audience: "a2a-gateway"}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tok := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(func(c jwt.MapClaims) { c["sub"] = DefaultPrincipal }))
	if p, ok := a.Authenticate(bearerReq(tok)); ok {
		t.Fatalf("token with sub %q authenticated as %q", DefaultPrincipal, p)
	}
	good := signTok(t, jwt.SigningMethodHS256, "", []byte(testSecret), claims(nil))
	if p, ok := a.Authenticate(bearerReq(good)); !ok || p != "alice" {
		t.Fatalf("a regular token: %q %v", p, ok)
	}
}
