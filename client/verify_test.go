package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// TestVerifyCard signs a card with agent/jws and checks --verify-key
// accepts the right PEM key and rejects another one and an unsigned card.
func TestVerifyCard(t *testing.T) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	other, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	signer, err := jws.NewSigner("k1", key)
	if err != nil {
		t.Fatal(err)
	}
	card := a2a.AgentCard{Name: "s", Description: "d", Version: "1", SupportedInterfaces: []a2a.AgentInterface{{URL: "http://h/", ProtocolBinding: "JSONRPC", ProtocolVersion: "1.0"}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"}, Skills: []a2a.AgentSkill{}}
	unsigned, _ := json.Marshal(card)
	payload, err := jws.CanonicalCard(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := signer.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	card.Signatures = []a2a.AgentCardSignature{sig}
	raw, _ := json.Marshal(card)

	dir := t.TempDir()
	writePEM := func(name string, k *ecdsa.PrivateKey) string {
		der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
		p := filepath.Join(dir, name)
		os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600)
		return p
	}
	good, bad := writePEM("good.pem", key), writePEM("bad.pem", other)
	ctx := context.Background()
	if err := VerifyCard(ctx, raw, Trust{KeyFiles: []string{good}}); err != nil {
		t.Fatalf("right key: %v", err)
	}
	if err := VerifyCard(ctx, raw, Trust{KeyFiles: []string{"k1=" + good}}); err != nil {
		t.Fatalf("right key with kid: %v", err)
	}
	if err := VerifyCard(ctx, raw, Trust{KeyFiles: []string{bad}}); err == nil || classify(err) != "transport" || !strings.Contains(err.Error(), "signature check failed") {
		t.Fatalf("wrong key: %v", err)
	}
	card.Signatures = nil
	if err := VerifyCard(ctx, unsigned, Trust{KeyFiles: []string{good}}); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("unsigned: %v", err)
	}
	if err := VerifyCard(ctx, raw, Trust{KeyFiles: []string{filepath.Join(dir, "missing.pem")}}); classify(err) != "usage" {
		t.Fatalf("missing key file: %v", err)
	}
}
