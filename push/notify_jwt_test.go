package push

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

func testSigner(t *testing.T, kid string) *jws.Signer {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jws.NewSigner(kid, k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestNotificationSignerRules (PUSH-8): public-key algorithms only, an
// absolute issuer, a lifetime of at most 5 minutes (the default).
func TestNotificationSignerRules(t *testing.T) {
	es := testSigner(t, "k1")
	hs, _ := jws.NewHMACSigner("h1", []byte(strings.Repeat("s", 32)))
	for name, f := range map[string]func() error{
		"no key":       func() error { _, err := NewNotificationSigner("https://a.example", 0, nil); return err },
		"hs256":        func() error { _, err := NewNotificationSigner("https://a.example", 0, []*jws.Signer{hs}); return err },
		"no issuer":    func() error { _, err := NewNotificationSigner("", 0, []*jws.Signer{es}); return err },
		"relative iss": func() error { _, err := NewNotificationSigner("/x", 0, []*jws.Signer{es}); return err },
		"long ttl": func() error {
			_, err := NewNotificationSigner("https://a.example", 6*time.Minute, []*jws.Signer{es})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	n, err := NewNotificationSigner("https://a.example", 0, []*jws.Signer{es, testSigner(t, "k0")})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := n.Token(Delivery{ID: "d-1", URL: "https://hook.example/x", TaskID: "t-1", Body: []byte(`{"a":1}`)}, time.Unix(1000, 0))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("not a compact JWS: %q", tok)
	}
	var hdr, claims map[string]any
	h, _ := base64.RawURLEncoding.DecodeString(parts[0])
	c, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(h, &hdr)
	_ = json.Unmarshal(c, &claims)
	if hdr["kid"] != "k1" || hdr["alg"] != "ES256" || hdr["typ"] != "JWT" {
		t.Errorf("header %v: want the first key, ES256, JWT", hdr)
	}
	if claims["iss"] != "https://a.example" || claims["aud"] != "https://hook.example/x" || claims["jti"] != "d-1" || claims["taskId"] != "t-1" ||
		claims["iat"] != float64(1000) || claims["exp"] != float64(1300) || len(claims["body_sha256"].(string)) != 64 {
		t.Errorf("claims %v", claims)
	}
}
