package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// signedCard returns the JSON of a card signed by each signer.
func signedCard(t *testing.T, signers ...*jws.Signer) []byte {
	t.Helper()
	card := a2a.AgentCard{Name: "s", Description: "d", Version: "1", SupportedInterfaces: []a2a.AgentInterface{{URL: "http://h/", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, Skills: []a2a.AgentSkill{}}
	unsigned, _ := json.Marshal(card)
	payload, err := jws.CanonicalCard(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range signers {
		sig, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		card.Signatures = append(card.Signatures, sig)
	}
	raw, _ := json.Marshal(card)
	return raw
}

// TestTrustKeySources: every key source of the one set of trust flags
// (CARD-7, CLI-1) verifies a card through VerifyCard — HS256 secrets, a
// JWKS file, --verify-key with a JWKS — and bad sources are usage errors.
func TestTrustKeySources(t *testing.T) {
	secret := []byte(strings.Repeat("s", 32))
	hs, err := jws.NewHMACSigner("hs-1", secret)
	if err != nil {
		t.Fatal(err)
	}
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec, err := jws.NewSigner("ec-1", key)
	if err != nil {
		t.Fatal(err)
	}
	hsCard, ecCard := signedCard(t, hs), signedCard(t, ec)
	jwk, _ := ec.PublicJWK()
	jwks, _ := json.Marshal(jws.JWKSet{Keys: []jws.JWK{jwk}})
	jwksPath := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksPath, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		name string
		raw  []byte
		t    Trust
		want string
	}{
		{"hs256", hsCard, Trust{HS256: []HS256Secret{{KID: "hs-1", Secret: secret}}}, "ok"},
		{"hs256 wrong secret", hsCard, Trust{HS256: []HS256Secret{{KID: "hs-1", Secret: []byte(strings.Repeat("w", 32))}}}, "transport"},
		{"hs256 short secret", hsCard, Trust{HS256: []HS256Secret{{KID: "hs-1", Secret: []byte("short")}}}, "usage"},
		{"jwks file", ecCard, Trust{JWKSFiles: []string{jwksPath}}, "ok"},
		{"jwks file as verify-key", ecCard, Trust{KeyFiles: []string{jwksPath}}, "ok"},
		{"jwks file, other card", hsCard, Trust{JWKSFiles: []string{jwksPath}}, "transport"},
		{"missing jwks file", ecCard, Trust{JWKSFiles: []string{jwksPath + ".missing"}}, "usage"},
		{"bad jwks url", ecCard, Trust{JWKSURLs: []string{"ftp://keys.example"}}, "usage"},
		{"bad jku origin", ecCard, Trust{AllowJKU: []string{"not a url"}}, "usage"},
	} {
		if got := classify(VerifyCard(ctx, c.raw, c.t)); got != c.want {
			t.Errorf("%s: class %s, want %s (%v)", c.name, got, c.want, VerifyCard(ctx, c.raw, c.t))
		}
	}
	if !(Trust{}).Empty() || (Trust{AllowJKU: []string{"https://k.example"}}).Empty() {
		t.Error("Empty is wrong")
	}
}
