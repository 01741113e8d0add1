package tests

// AUTH-9, the AND requirement: with `mtls { require_with_bearer }` a
// request needs both a client certificate the site's TLS server verified
// (and the mtls rules map) and a bearer token; the principal is the
// token's. The card declares one securityRequirements entry naming both
// schemes. `caddy a2a card validate --probe` passes when given the client
// certificate (--cert/--key) and the bearer token.

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// writeClientPEM writes c's certificate and EC key as PEM files in dir.
func writeClientPEM(t *testing.T, dir string, c tls.Certificate) (certFile, keyFile string) {
	t.Helper()
	der, err := x509.MarshalECPrivateKey(c.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "client.pem"), filepath.Join(dir, "client.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

func TestMTLSRequireWithBearer(t *testing.T) {
	t.Parallel()
	ca := newMTLSCA(t, "mtls and test CA")
	now := time.Now()
	svc := ca.client(t, "spiffe://example.org/svc", now.Add(-time.Hour), now.Add(time.Hour))
	stranger := ca.client(t, "spiffe://example.org/stranger", now.Add(-time.Hour), now.Add(time.Hour))
	const token = "alice-token-0123456789abcdef"

	dir := t.TempDir()
	caFile := filepath.Join(dir, "clients-ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	site := `https://localhost:{{HTTPS_PORT}} {
	tls internal {
		client_auth {
			mode require_and_verify
			trust_pool file ` + caFile + `
		}
	}
	a2a {
		card {
			name mtls-and
		}
		auth {
			no_env
			principal alice bearer ` + token + `
			mtls {
				principal_from san_uri
				principal svc spiffe://example.org/svc
				require_with_bearer
			}
		}
	}
}
`
	gw := harness.StartGatewayWith(t, site, harness.Options{Global: "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}", NoHealthWait: true})
	base := fmt.Sprintf("https://localhost:%d", gw.HTTPSPort)
	rootFile := filepath.Join(gw.Dir, "storage", "pki", "authorities", "local", "root.crt")
	roots := x509.NewCertPool()
	do := func(c *tls.Certificate, authz, method, path, body string) (int, string, error) {
		cfg := &tls.Config{RootCAs: roots}
		if c != nil {
			cfg.Certificates = []tls.Certificate{*c}
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), nil
	}
	deadline := time.Now().Add(30 * time.Second)
	var last any
	for {
		if p, err := os.ReadFile(rootFile); err == nil && roots.AppendCertsFromPEM(p) {
			code, _, err := do(&svc, "", http.MethodGet, "/.well-known/agent-card.json", "")
			if last = err; err == nil && code == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mTLS gateway not ready (%v):\n%s", last, gw.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The card: one requirement naming both schemes (AND).
	_, cardJSON, err := do(&svc, "", http.MethodGet, "/.well-known/agent-card.json", "")
	if err != nil {
		t.Fatal(err)
	}
	if want := `"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]},"mtlsAuth":{"list":[]}}}]`; !strings.Contains(cardJSON, want) {
		t.Fatalf("card lacks %s:\n%s", want, cardJSON)
	}

	send := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"and-1","parts":[{"text":"hello and"}]}}}`
	list := `{"jsonrpc":"2.0","id":2,"method":"ListTasks","params":{}}`
	for _, c := range []struct {
		name  string
		cert  *tls.Certificate
		authz string
	}{
		{"certificate only", &svc, ""},
		{"unmapped certificate with bearer", &stranger, "Bearer " + token},
		{"certificate with a wrong bearer", &svc, "Bearer wrong-token-0123456789abcdef"},
	} {
		if code, body, err := do(c.cert, c.authz, http.MethodPost, "/", list); err != nil || code != http.StatusUnauthorized {
			t.Errorf("%s: %d %s %v, want 401", c.name, code, body, err)
		}
	}
	// Bearer only: the handshake needs a certificate (require_and_verify);
	// the gateway would answer 401 to a TLS server that merely requested one.
	if code, body, err := do(nil, "Bearer "+token, http.MethodPost, "/", list); err == nil && code != http.StatusUnauthorized {
		t.Errorf("bearer only: %d %s, want refused", code, body)
	}
	// Both: accepted, as the bearer's principal (alice).
	if code, body, err := do(&svc, "Bearer "+token, http.MethodPost, "/", send); err != nil || code != http.StatusOK || !strings.Contains(body, "Echo: hello and") {
		t.Fatalf("certificate and bearer: %d %s %v", code, body, err)
	}
	if code, body, err := do(&svc, "Bearer "+token, http.MethodPost, "/", list); err != nil || code != http.StatusOK || !strings.Contains(body, "hello and") {
		t.Fatalf("certificate and bearer ListTasks: %d %s %v", code, body, err)
	}

	// card validate --probe with the client certificate and the token.
	certFile, keyFile := writeClientPEM(t, dir, svc)
	out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", base, "--cert", certFile, "--key", keyFile, "--cacert", rootFile, "-H", "Authorization: Bearer "+token)
	if err != nil || !strings.Contains(out, "ok: no errors") {
		t.Errorf("card validate --probe with --cert: %v\n%s", err, out)
	}
	// Without the certificate the handshake fails: validate cannot fetch.
	if out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", base, "--cacert", rootFile, "-H", "Authorization: Bearer "+token); err == nil {
		t.Errorf("card validate --probe without a certificate passed:\n%s", out)
	}
}
