package tests

// End-to-end tests of issue #6 (trust): card signing (CARD-6), verification
// (CARD-7), the extended card (CARD-8), the validator and its probe
// (CARD-9) and JWT bearer auth (AUTH-3), against the real binary.

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const trustSecret = "trust-e2e-hs256-secret-0123456789abcdef"

func trustWritePEM(t *testing.T, dir, name string, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func trustGet(t *testing.T, u string) []byte {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
	}
	return b
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// runEnv runs the binary with extra environment variables.
func runEnv(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), args...)
	cmd.Dir = t.TempDir()
	cmd.Env = harness.Env(t.TempDir(), env...)
	b, err := cmd.CombinedOutput()
	return string(b), exitCode(err)
}

const trustCardBlock = `
		card {
			name "Route Planner"
			description "Plans driving routes with live traffic for delivery fleets."
			version 1.0.0
			skill routes {
				name "Route planning"
				description "Plans driving routes with live traffic data."
				tags maps routing
			}
			sign es256 {
				kid ec-1
				key_file {{DIR}}/ec.pem
			}
			sign eddsa {
				kid ed-1
				key_file {{DIR}}/ed.pem
			}
			sign hs256 {
				kid hs-1
				secret {env.TRUST_CARD_SECRET}
			}
			jwks_path /.well-known/jwks.json
		}`

// startSignedGateway starts a gateway whose card is signed with ES256,
// EdDSA and HS256 keys (rotation: one signature each). extra is added to
// the a2a block.
func startSignedGateway(t *testing.T, extra string, env ...string) *harness.Gateway {
	t.Helper()
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	// The gateway's directory is created by the harness; write the keys
	// into a directory we pass through {{DIR}} after it exists.
	site := "http://{{ADDR}} {\n\ta2a {" + trustCardBlock + "\n" + extra + "\n\t}\n}\n"
	keyDir := t.TempDir()
	trustWritePEM(t, keyDir, "ec.pem", ecKey)
	trustWritePEM(t, keyDir, "ed.pem", edKey)
	site = strings.ReplaceAll(site, "{{DIR}}", keyDir)
	return harness.StartGatewayWith(t, site, harness.Options{Env: append([]string{"TRUST_CARD_SECRET=" + trustSecret}, env...)})
}

// CARD-6, CARD-7: the served card carries one signature per key; each
// verifies with our verifier (keys from the served JWKS and the secret);
// the JWKS never holds the HS256 secret; `caddy a2a card verify` exits 0
// with a right key and 1 with a wrong one.
func TestTrustSignedCardVerifies(t *testing.T) {
	t.Parallel()
	gw := startSignedGateway(t, "")
	raw := trustGet(t, gw.URL+"/.well-known/agent-card.json")
	var card struct {
		Signatures []struct{ Protected, Signature string } `json:"signatures"`
	}
	if err := json.Unmarshal(raw, &card); err != nil || len(card.Signatures) != 3 {
		t.Fatalf("want 3 signatures, got %d (%v): %s", len(card.Signatures), err, raw)
	}
	jwksRaw := trustGet(t, gw.URL+"/.well-known/jwks.json")
	if bytes.Contains(jwksRaw, []byte(`"oct"`)) || bytes.Contains(jwksRaw, []byte(`"d"`)) {
		t.Fatalf("JWKS leaks secret material: %s", jwksRaw)
	}
	ks, err := jws.ParseJWKS(jwksRaw)
	if err != nil || ks.Len() != 2 {
		t.Fatalf("jwks: %d keys, %v", ks.Len(), err)
	}
	_ = ks.AddSecret("hs-1", []byte(trustSecret))
	res, err := (&jws.Verifier{Keys: ks}).VerifyCard(t.Context(), raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("signature %d (%s): %v", r.Index, r.Header.Kid, r.Err)
		}
	}
	// The legacy path serves the same signed bytes.
	if legacy := trustGet(t, gw.URL+"/.well-known/agent.json"); !bytes.Equal(legacy, raw) {
		t.Error("legacy card path serves different bytes")
	}

	out, code := runEnv(t, []string{"K=" + trustSecret}, "a2a", "card", "verify", gw.URL, "--hs256-env", "hs-1=K")
	if code != 0 || !strings.Contains(out, `kid="hs-1" alg=HS256: ok`) {
		t.Fatalf("verify with the secret: exit %d\n%s", code, out)
	}
	out, code = runEnv(t, nil, "a2a", "card", "verify", gw.URL, "--jwks-url", gw.URL+"/.well-known/jwks.json")
	if code != 0 || strings.Count(out, ": ok") != 2 {
		t.Fatalf("verify with the JWKS URL: exit %d\n%s", code, out)
	}
	out, code = runEnv(t, []string{"K=" + strings.Repeat("w", 40)}, "a2a", "card", "verify", gw.URL, "--hs256-env", "hs-1=K")
	if code != 1 || !strings.Contains(out, "card signature not verified") {
		t.Fatalf("verify with a wrong secret: exit %d\n%s", code, out)
	}
	if strings.Contains(out, strings.Repeat("w", 40)) {
		t.Fatal("the secret appears in the output")
	}
	_, code = runEnv(t, nil, "a2a", "card", "verify", gw.URL)
	if code != 2 {
		t.Fatalf("verify without keys: exit %d, want 2", code)
	}
}

// Interop: the JS SDK (@a2a-js/sdk verifyAgentCardSignature) verifies the
// gateway-signed card, and a card signed by the SDK's
// generateAgentCardSignature verifies with ours (library and CLI).
func TestTrustInteropJSSDKSignatures(t *testing.T) {
	t.Parallel()
	node, dir := interopNodeSDK(t)
	gw := startSignedGateway(t, "")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "sign_verify.mjs", "verify", gw.URL+"/.well-known/agent-card.json", gw.URL+"/.well-known/jwks.json")
	cmd.Dir = dir
	out, err := cmd.Output()
	var sum struct {
		OK               bool     `json:"ok"`
		Kids             []string `json:"kids"`
		TamperedRejected bool     `json:"tamperedRejected"`
		Error            string   `json:"error"`
	}
	if jerr := json.Unmarshal(bytes.TrimSpace(out), &sum); jerr != nil || err != nil || !sum.OK || !sum.TamperedRejected {
		t.Fatalf("JS SDK did not verify the gateway card: %v %v %s", err, jerr, out)
	}
	if len(sum.Kids) == 0 || sum.Kids[0] != "ec-1" {
		t.Errorf("JS SDK verified with %v, want ec-1 first", sum.Kids)
	}

	// The SDK signs the gateway's (unsigned) card; we verify.
	var m map[string]any
	_ = json.Unmarshal(trustGet(t, gw.URL+"/.well-known/agent-card.json"), &m)
	delete(m, "signatures")
	tmp := t.TempDir()
	cardPath := filepath.Join(tmp, "card.json")
	b, _ := json.Marshal(m)
	_ = os.WriteFile(cardPath, b, 0o600)
	cmd = exec.CommandContext(ctx, node, "sign_verify.mjs", "sign", cardPath)
	cmd.Dir = dir
	out, err = cmd.Output()
	if err != nil {
		t.Fatalf("JS SDK signing: %v %s", err, out)
	}
	var signed struct {
		Card json.RawMessage `json:"card"`
		JWKS json.RawMessage `json:"jwks"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(out), &signed); err != nil {
		t.Fatalf("JS output: %v %s", err, out)
	}
	ks, err := jws.ParseJWKS(signed.JWKS)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&jws.Verifier{Keys: ks}).VerifyCard(t.Context(), signed.Card); err != nil {
		t.Fatalf("our verifier rejects the JS-signed card: %v", err)
	}
	jsCard := filepath.Join(tmp, "js-card.json")
	jsJWKS := filepath.Join(tmp, "js-jwks.json")
	_ = os.WriteFile(jsCard, signed.Card, 0o600)
	_ = os.WriteFile(jsJWKS, signed.JWKS, 0o600)
	o, code := runEnv(t, nil, "a2a", "card", "verify", jsCard, "--jwks-file", jsJWKS)
	if code != 0 {
		t.Fatalf("CLI rejects the JS-signed card: exit %d\n%s", code, o)
	}
	// Tampering after signing breaks it.
	tampered := bytes.Replace(signed.Card, []byte("Route Planner"), []byte("Route Planner 2"), 1)
	_ = os.WriteFile(jsCard, tampered, 0o600)
	if _, code := runEnv(t, nil, "a2a", "card", "verify", jsCard, "--jwks-file", jsJWKS); code != 1 {
		t.Fatalf("tampered JS-signed card: exit %d, want 1", code)
	}
}

func trustJWT(t *testing.T, secret, iss, aud, sub string, exp time.Time) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{
		"iss": iss, "aud": aud, "sub": sub, "exp": exp.Unix(), "iat": time.Now().Unix(),
	}).SignedString([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// AUTH-3 and CARD-8: with `auth { jwt {…} }` the card advertises
// bearerAuth with bearerFormat JWT and extendedAgentCard; a valid JWT gets
// the extended card (runtime details, signed like the public card, no
// secrets or paths); expired, wrong-audience and wrong-key tokens get 401.
func TestTrustJWTAndExtendedCard(t *testing.T) {
	t.Parallel()
	const jwtSecret = "trust-e2e-jwt-secret-abcdefghijklmnop"
	gw := startSignedGateway(t, `
		auth {
			no_env
			jwt {
				secret {env.TRUST_JWT_SECRET}
				issuer https://issuer.example.com
				audience caddy-a2a
				clock_skew 10s
			}
		}`, "TRUST_JWT_SECRET="+jwtSecret)
	raw := trustGet(t, gw.URL+"/.well-known/agent-card.json")
	var pub struct {
		Capabilities struct {
			ExtendedAgentCard bool `json:"extendedAgentCard"`
		} `json:"capabilities"`
		SecuritySchemes map[string]struct {
			HTTPAuth *struct {
				Scheme       string `json:"scheme"`
				BearerFormat string `json:"bearerFormat"`
			} `json:"httpAuthSecurityScheme"`
		} `json:"securitySchemes"`
	}
	_ = json.Unmarshal(raw, &pub)
	if s := pub.SecuritySchemes["bearerAuth"].HTTPAuth; s == nil || s.BearerFormat != "JWT" || !pub.Capabilities.ExtendedAgentCard {
		t.Fatalf("card does not advertise a JWT bearer scheme and the extended card: %s", raw)
	}

	good := trustJWT(t, jwtSecret, "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(time.Minute))
	for name, tok := range map[string]string{
		"expired":      trustJWT(t, jwtSecret, "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(-time.Minute)),
		"wrong aud":    trustJWT(t, jwtSecret, "https://issuer.example.com", "other", "alice", time.Now().Add(time.Minute)),
		"wrong iss":    trustJWT(t, jwtSecret, "https://evil.example.com", "caddy-a2a", "alice", time.Now().Add(time.Minute)),
		"wrong secret": trustJWT(t, strings.Repeat("x", 40), "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(time.Minute)),
		"none":         "",
	} {
		if r := harness.At(gw.URL, harness.Bearer(tok)).Call(t, "GetExtendedAgentCard", map[string]any{}); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: status %d, want 401", name, r.StatusCode)
		}
	}
	r := harness.At(gw.URL, harness.Bearer(good)).Call(t, "GetExtendedAgentCard", map[string]any{})
	code, body := r.StatusCode, r.Raw
	if code != 200 {
		t.Fatalf("valid JWT: status %d %s", code, body)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal(body, &resp); err != nil || resp.Error != nil || resp.Result == nil {
		t.Fatalf("GetExtendedAgentCard: %s", body)
	}
	ext := string(resp.Result)
	for _, want := range []string{`"urn:caddy-a2a:gateway-runtime:v1"`, `"max_concurrent_turns":64`, `"store":"sqlite"`, `"startedAt":"`, `"bindings":["JSONRPC","HTTP+JSON"]`} {
		if !strings.Contains(ext, want) {
			t.Errorf("extended card lacks %s: %s", want, ext)
		}
	}
	for _, secret := range []string{jwtSecret, trustSecret, gw.Dir, "ec.pem", "/tmp"} {
		if strings.Contains(ext, secret) {
			t.Errorf("extended card leaks %q", secret)
		}
	}
	ks, _ := jws.ParseJWKS(trustGet(t, gw.URL+"/.well-known/jwks.json"))
	_ = ks.AddSecret("hs-1", []byte(trustSecret))
	res, err := (&jws.Verifier{Keys: ks}).VerifyCard(t.Context(), resp.Result)
	if err != nil || len(res) != 3 {
		t.Fatalf("extended card signatures: %d, %v", len(res), err)
	}
}

// CARD-8: without auth the card does not declare the extended card and
// the method answers UnsupportedOperationError (-32004).
func TestTrustExtendedCardWithoutAuth(t *testing.T) {
	t.Parallel()
	gw := startSignedGateway(t, "")
	raw := trustGet(t, gw.URL+"/.well-known/agent-card.json")
	if bytes.Contains(raw, []byte("extendedAgentCard\":true")) {
		t.Fatalf("card declares the extended card without auth: %s", raw)
	}
	body := harness.At(gw.URL).Call(t, "GetExtendedAgentCard", map[string]any{}).Raw
	if !bytes.Contains(body, []byte("-32004")) {
		t.Fatalf("want UnsupportedOperationError, got %s", body)
	}
}

// CARD-9 --probe: the real gateway probes clean; a server that declares
// streaming but fails it yields the /capabilities/streaming finding.
func TestTrustValidateProbe(t *testing.T) {
	t.Parallel()
	gw := startSignedGateway(t, "")
	out, code := runEnv(t, []string{"K=" + trustSecret}, "a2a", "card", "validate", gw.URL, "--probe",
		"--jwks-url", gw.URL+"/.well-known/jwks.json", "--hs256-env", "hs-1=K", "--json")
	if code != 0 {
		t.Fatalf("probe of the real gateway: exit %d\n%s", code, out)
	}
	var fs []struct{ Severity, Pointer, Message string }
	if err := json.Unmarshal([]byte(out), &fs); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	for _, f := range fs {
		if f.Severity == "error" || strings.HasPrefix(f.Pointer, "/capabilities") || strings.HasPrefix(f.Pointer, "/signatures") {
			t.Errorf("unexpected finding on the real gateway: %+v", f)
		}
	}

	var srvURL string // set before the server starts: no race with its handler
	bad := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/.well-known/agent-card.json":
			w.Header().Set("Content-Type", "application/a2a+json")
			_, _ = io.WriteString(w, `{"name":"Broken Streamer","description":"Declares streaming but cannot stream at all.","version":"1.0.0",
"supportedInterfaces":[{"url":"`+srvURL+`/","protocolBinding":"JSONRPC","protocolVersion":"1.0"}],
"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],
"skills":[{"id":"x","name":"Echo","description":"Echoes whatever it is sent back.","tags":["echo"]}]}`)
		case r.Method == http.MethodPost && r.URL.Path == "/":
			var req struct {
				Method string `json:"method"`
			}
			_ = json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req)
			w.Header().Set("Content-Type", "application/json")
			if req.Method == "SendStreamingMessage" {
				w.WriteHeader(http.StatusInternalServerError)
				_, _ = io.WriteString(w, `{"error":"streaming is broken"}`)
				return
			}
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Task not found"}}`)
		default:
			http.NotFound(w, r)
		}
	}))
	srvURL = "http://" + bad.Listener.Addr().String()
	bad.Start()
	defer bad.Close()
	out, code = runEnv(t, nil, "a2a", "card", "validate", bad.URL, "--probe")
	if code != 1 {
		t.Fatalf("probe of the misconfigured server: exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(out, "error   /capabilities/streaming: streaming is declared but the streaming call answered status 500") {
		t.Fatalf("missing the streaming finding:\n%s", out)
	}
	if !strings.Contains(out, "caddy a2a: card validation failed") {
		t.Errorf("no one-line error on stderr:\n%s", out)
	}
	// Usage errors exit 2.
	if _, code := runEnv(t, nil, "a2a", "card", "validate"); code != 2 {
		t.Errorf("validate without an argument: exit %d, want 2", code)
	}
	if _, code := runEnv(t, nil, "a2a", "card", "validate", "card.json", "--probe"); code != 2 {
		t.Errorf("--probe on a file: exit %d, want 2", code)
	}
}

// `caddy a2a card init` writes a card that validates, and a card block
// the a2a directive accepts.
func TestTrustCardInit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cardPath := filepath.Join(dir, "card.json")
	args := []string{"a2a", "card", "init", "--name", "Route Planner", "--description", "Plans driving routes with live traffic data.",
		"--url", "https://agent.example.com/", "--provider-org", "Example Inc.", "--provider-url", "https://example.com",
		"--skill", "routes|Route planning|Plans driving routes with traffic.|maps,routing"}
	if out, code := runEnv(t, nil, append(args, "-o", cardPath)...); code != 0 {
		t.Fatalf("init json: exit %d\n%s", code, out)
	}
	out, code := runEnv(t, nil, "a2a", "card", "validate", cardPath, "--production")
	if code != 0 || !strings.Contains(out, "ok: no errors, 0 warning(s)") {
		t.Fatalf("generated card does not validate cleanly: exit %d\n%s", code, out)
	}
	block, code := runEnv(t, nil, append(args, "--format", "caddyfile")...)
	if code != 0 || !strings.HasPrefix(block, "card {") {
		t.Fatalf("init caddyfile: exit %d\n%s", code, block)
	}
	gw := harness.StartGateway(t, "a2a {\n"+block+"\n}")
	if b := trustGet(t, gw.URL+"/.well-known/agent-card.json"); !bytes.Contains(b, []byte(`"Route Planner"`)) {
		t.Fatalf("gateway with the generated block: %s", b)
	}
	if _, code := runEnv(t, nil, "a2a", "card", "init"); code != 2 {
		t.Errorf("init without --name: exit %d, want 2", code)
	}
}
