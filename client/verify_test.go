package client

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	raw, unsigned := signedCard(t, signer), signedCard(t)

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
	if err := VerifyCard(ctx, unsigned, Trust{KeyFiles: []string{good}}); err == nil || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("unsigned: %v", err)
	}
	if err := VerifyCard(ctx, raw, Trust{KeyFiles: []string{filepath.Join(dir, "missing.pem")}}); classify(err) != "usage" {
		t.Fatalf("missing key file: %v", err)
	}
}
