package caddymodule

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// issue 29: `grpc { listen ADDR }` sets grpc_listen, and the card
// advertises GRPC at that port; tls_cert/tls_key go with it.
func TestUnmarshalGRPCListen(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc {\nreflection\nlisten 127.0.0.1:50051\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if c := hs.agent.GRPCListen; !hs.agent.GRPC || !hs.agent.GRPCReflection || c == nil || c.Address != "127.0.0.1:50051" || c.TLSCert != "" {
		t.Fatalf("grpc listen: GRPC %v, reflection %v, listen %+v", hs.agent.GRPC, hs.agent.GRPCReflection, c)
	}
	raw, _ := json.Marshal(hs.agent)
	if !strings.Contains(string(raw), `"grpc_listen":{"address":"127.0.0.1:50051"}`) {
		t.Errorf("adapted handler: %s", raw)
	}
	if got := hs.agent.cardFacts().GRPCPort; got != "50051" {
		t.Errorf("card fact grpc port = %q, want 50051", got)
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc {\nlisten 0.0.0.0:50051\ntls_cert /c.pem\ntls_key /k.pem\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if c := hs.agent.GRPCListen; c == nil || c.TLSCert != "/c.pem" || c.TLSKey != "/k.pem" {
		t.Errorf("tls: %+v", c)
	}
	if hs, _ := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc\n}"); hs.agent.GRPCListen != nil || hs.agent.cardFacts().GRPCPort != "" {
		t.Errorf("bare grpc: listen %+v", hs.agent.GRPCListen)
	}
	for _, bad := range []string{"listen", "listen a:1 b:2", "tls_cert"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc {\n"+bad+"\n}\n}"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// issue 29, OPS-9: plaintext only on loopback; the errors name the option.
func TestValidateGRPCListen(t *testing.T) {
	for _, tc := range []struct {
		cfg  GRPCListenConfig
		grpc bool
		want string // "" = valid
	}{
		{GRPCListenConfig{Address: "127.0.0.1:1"}, true, ""},
		{GRPCListenConfig{Address: "127.9.9.9:1"}, true, ""},
		{GRPCListenConfig{Address: "[::1]:1"}, true, ""},
		{GRPCListenConfig{Address: "localhost:1"}, true, ""},
		{GRPCListenConfig{Address: "0.0.0.0:1", TLSCert: "c", TLSKey: "k"}, true, ""},
		{GRPCListenConfig{Address: "127.0.0.1:1"}, false, "needs grpc"},
		{GRPCListenConfig{Address: "0.0.0.0:1"}, true, "non-loopback address needs tls_cert and tls_key"},
		{GRPCListenConfig{Address: ":1"}, true, "non-loopback"},
		{GRPCListenConfig{Address: "10.0.0.1:1"}, true, "non-loopback"},
		{GRPCListenConfig{Address: "127.0.0.1"}, true, "host:port"},
		{GRPCListenConfig{Address: ""}, true, "host:port"},
		{GRPCListenConfig{Address: "127.0.0.1:1", TLSCert: "c"}, true, "go together"},
	} {
		h := &AgentHandler{GRPC: tc.grpc, GRPCListen: &tc.cfg}
		err := h.validateGRPCListen()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "grpc")) {
			t.Errorf("%+v (grpc %v): err = %v, want %q", tc.cfg, tc.grpc, err, tc.want)
		}
	}
}

// issue 29: the listener's certificate and key load from PEM files; a key
// file group or others can read is refused, as every key file is.
func TestGRPCListenCredentials(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "grpc"}, NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	c := &GRPCListenConfig{Address: "0.0.0.0:1", TLSCert: certPath, TLSKey: keyPath}
	if creds, err := c.credentials(); err != nil || creds == nil || creds.Info().SecurityProtocol != "tls" {
		t.Fatalf("credentials() = %v, %v", creds, err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(keyPath, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := c.credentials(); err == nil || !strings.Contains(err.Error(), "tls_key") {
			t.Errorf("key at 0644: err = %v, want a tls_key mode error", err)
		}
	}
	c.TLSKey = certPath // not a key
	if _, err := c.credentials(); err == nil || strings.Contains(err.Error(), dir) {
		t.Errorf("mismatched pair: err = %v, want an error without the path", err)
	}
}
