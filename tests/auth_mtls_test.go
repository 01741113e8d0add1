package tests

// AUTH-9: on a site whose TLS server verifies client certificates
// (Caddy's tls client_auth require_and_verify with a trust pool), the
// verified certificate's SAN URI maps to a principal on HTTP (JSON-RPC),
// gRPC and WebSocket; a certificate from another CA and an expired one
// are refused at the handshake; an unmapped identity is refused 401; the
// card declares mtlsSecurityScheme. The CA and certificates are generated
// here.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"github.com/coder/websocket"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// mtlsCA is a test certificate authority.
type mtlsCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newMTLSCA(t *testing.T, name string) *mtlsCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &mtlsCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// client issues a client certificate for the SAN URI id, valid from
// notBefore to notAfter.
func (ca *mtlsCA) client(t *testing.T, id string, notBefore, notAfter time.Time) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(id)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: "client"}, URIs: []*url.URL{u},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func TestMTLSPrincipals(t *testing.T) {
	t.Parallel()
	ca, other := newMTLSCA(t, "mtls test CA"), newMTLSCA(t, "another CA")
	now := time.Now()
	svc := ca.client(t, "spiffe://example.org/svc", now.Add(-time.Hour), now.Add(time.Hour))
	bot := ca.client(t, "spiffe://example.org/bot", now.Add(-time.Hour), now.Add(time.Hour))
	stranger := ca.client(t, "spiffe://example.org/stranger", now.Add(-time.Hour), now.Add(time.Hour))
	foreign := other.client(t, "spiffe://example.org/svc", now.Add(-time.Hour), now.Add(time.Hour))
	expired := ca.client(t, "spiffe://example.org/svc", now.Add(-48*time.Hour), now.Add(-24*time.Hour))

	dir := t.TempDir()
	caFile := filepath.Join(dir, "clients-ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	site := "https://localhost:{{HTTPS_PORT}} {\n\ttls internal {\n\t\tclient_auth {\n\t\t\tmode require_and_verify\n\t\t\ttrust_pool file " + caFile +
		"\n\t\t}\n\t}\n\ta2a {\n\t\tcard {\n\t\t\tname mtls\n\t\t}\n\t\tauth {\n\t\t\tno_env\n\t\t\tmtls {\n\t\t\t\tprincipal_from san_uri\n" +
		"\t\t\t\tprincipal svc spiffe://example.org/svc\n\t\t\t\tprincipal bot spiffe://example.org/bot\n\t\t\t}\n\t\t}\n\t\tgrpc\n\t\twebsocket /ws\n\t}\n}\n"
	gw := harness.StartGatewayWith(t, site, harness.Options{Global: "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}", NoHealthWait: true})
	base := fmt.Sprintf("https://localhost:%d", gw.HTTPSPort) // a name: Caddy enforces SNI = Host with client_auth
	roots := x509.NewCertPool()
	clientFor := func(c tls.Certificate) *http.Client {
		return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{c}}}}
	}
	deadline := time.Now().Add(30 * time.Second)
	var last any
	for {
		if p, err := os.ReadFile(filepath.Join(gw.Dir, "storage", "pki", "authorities", "local", "root.crt")); err == nil && roots.AppendCertsFromPEM(p) {
			resp, err := clientFor(svc).Get(base + "/.well-known/agent-card.json")
			last = err
			if err == nil {
				resp.Body.Close()
				last = resp.Status
				if resp.StatusCode == http.StatusOK {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mTLS gateway not ready (%v):\n%s", last, gw.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}

	// The card declares the scheme and requires it.
	resp, err := clientFor(svc).Get(base + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatal(err)
	}
	var card struct {
		SecuritySchemes      map[string]map[string]json.RawMessage `json:"securitySchemes"`
		SecurityRequirements []struct {
			Schemes map[string]any `json:"schemes"`
		} `json:"securityRequirements"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&card)
	resp.Body.Close()
	if _, ok := card.SecuritySchemes["mtlsAuth"]["mtlsSecurityScheme"]; !ok || len(card.SecurityRequirements) != 1 || card.SecurityRequirements[0].Schemes["mtlsAuth"] == nil {
		t.Fatalf("card security %+v, want mtlsAuth (mtlsSecurityScheme) required", card)
	}

	// HTTP (JSON-RPC): svc sends a message; bot does not see svc's task;
	// an identity the mapping does not name is 401.
	rpc := func(c tls.Certificate, method string, params any) (int, string) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
		req, _ := http.NewRequest(http.MethodPost, base+"/", strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		resp, err := clientFor(c).Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := rpc(svc, "SendMessage", map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "mtls-1", "parts": []any{map[string]any{"text": "hello mtls"}}}})
	if code != http.StatusOK || !strings.Contains(body, "Echo: hello mtls") {
		t.Fatalf("svc SendMessage: %d %s", code, body)
	}
	if code, body := rpc(svc, "ListTasks", map[string]any{}); code != http.StatusOK || !strings.Contains(body, "hello mtls") {
		t.Fatalf("svc ListTasks: %d %s", code, body)
	}
	if code, body := rpc(bot, "ListTasks", map[string]any{}); code != http.StatusOK || strings.Contains(body, "hello mtls") {
		t.Fatalf("bot ListTasks: %d %s, want its own (empty) list", code, body)
	}
	if code, body := rpc(stranger, "ListTasks", map[string]any{}); code != http.StatusUnauthorized || !strings.Contains(body, "UNAUTHENTICATED") {
		t.Fatalf("an unmapped identity: %d %s, want 401", code, body)
	}
	// Refused at the handshake: another CA, an expired certificate, none.
	for name, c := range map[string]*tls.Certificate{"another CA": &foreign, "expired": &expired, "no certificate": nil} {
		cfg := &tls.Config{RootCAs: roots}
		if c != nil {
			cfg.Certificates = []tls.Certificate{*c}
		}
		hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := hc.Post(base+"/", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`))
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			t.Fatalf("%s: answered %d %s, want a refused handshake", name, resp.StatusCode, b)
		}
	}

	// gRPC over TLS: the same principal (svc sees its task; bot does not).
	ctx, cancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "a2a-version", "1.0"), 30*time.Second)
	defer cancel()
	grpcList := func(c tls.Certificate) (*pb.ListTasksResponse, error) {
		conn, err := grpc.NewClient(fmt.Sprintf("localhost:%d", gw.HTTPSPort),
			grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: roots, Certificates: []tls.Certificate{c}})))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return pb.NewA2AServiceClient(conn).ListTasks(ctx, &pb.ListTasksRequest{})
	}
	if res, err := grpcList(svc); err != nil || len(res.GetTasks()) != 1 {
		t.Fatalf("svc over gRPC: %v, %v; want its one task", res, err)
	}
	if res, err := grpcList(bot); err != nil || len(res.GetTasks()) != 0 {
		t.Fatalf("bot over gRPC: %v, %v; want no task", res, err)
	}
	if _, err := grpcList(stranger); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Fatalf("an unmapped identity over gRPC: %v, want UNAUTHENTICATED", err)
	}

	// WebSocket over TLS: the upgrade authenticates with the certificate.
	wsList := func(c tls.Certificate) (string, error) {
		hc := clientFor(c)
		conn, resp, err := websocket.Dial(ctx, strings.Replace(base, "https://", "wss://", 1)+"/ws",
			&websocket.DialOptions{HTTPClient: hc, HTTPHeader: http.Header{"A2A-Version": {"1.0"}}})
		if err != nil {
			if resp != nil {
				return "", fmt.Errorf("upgrade %d: %w", resp.StatusCode, err)
			}
			return "", err
		}
		defer conn.CloseNow()
		if err := conn.Write(ctx, websocket.MessageText, []byte(`{"id":"w1","payload":{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}}`)); err != nil {
			return "", err
		}
		_, b, err := conn.Read(ctx)
		return string(b), err
	}
	if got, err := wsList(svc); err != nil || !strings.Contains(got, "hello mtls") {
		t.Fatalf("svc over WebSocket: %s, %v", got, err)
	}
	if got, err := wsList(bot); err != nil || strings.Contains(got, "hello mtls") || !strings.Contains(got, "tasks") {
		t.Fatalf("bot over WebSocket: %s, %v", got, err)
	}
	if _, err := wsList(stranger); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("an unmapped identity over WebSocket: %v, want 401", err)
	}

	// Issue 30 done-when: card validate --probe passes, presenting the
	// client certificate (--cert/--key) and trusting the site's CA.
	certFile, keyFile := writeClientPEM(t, dir, svc)
	out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", base, "--cert", certFile, "--key", keyFile,
		"--cacert", filepath.Join(gw.Dir, "storage", "pki", "authorities", "local", "root.crt"))
	if err != nil || !strings.Contains(out, "ok: no errors") {
		t.Errorf("card validate --probe with --cert: %v\n%s", err, out)
	}
}
