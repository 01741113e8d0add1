package jws

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

func testCard() *a2a.AgentCard {
	return &a2a.AgentCard{
		Name:        "Route Planner",
		Description: "Plans routes with live traffic data for delivery fleets.",
		SupportedInterfaces: []a2a.AgentInterface{
			{URL: "https://agent.example.com/", ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "1.0"},
		},
		Provider:           &a2a.AgentProvider{Organization: "Example", URL: "https://example.com"},
		Version:            "1.2.0",
		Capabilities:       a2a.AgentCapabilities{Streaming: a2a.Bool(true), PushNotifications: a2a.Bool(false)},
		DefaultInputModes:  []string{"text/plain"},
		DefaultOutputModes: []string{"text/plain"},
		Skills:             []a2a.AgentSkill{{ID: "route", Name: "Route", Description: "Computes routes", Tags: []string{"maps"}}},
	}
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func pemKey(t *testing.T, k any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

type testKeys struct {
	hs    *Signer
	es    *Signer
	ed    *Signer
	ecKey *ecdsa.PrivateKey
	edKey ed25519.PrivateKey
	set   *KeySet
}

func newTestKeys(t *testing.T) testKeys {
	t.Helper()
	ecKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	secret := []byte(strings.Repeat("s", 32))
	hs, err := NewHMACSigner("hs-1", secret)
	if err != nil {
		t.Fatal(err)
	}
	es, err := ParsePrivateKeyPEM("es-1", "es256", pemKey(t, ecKey))
	if err != nil {
		t.Fatal(err)
	}
	ed, err := ParsePrivateKeyPEM("ed-1", "", pemKey(t, edKey))
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := PublicJWKS([]*Signer{hs, es, ed})
	if err != nil {
		t.Fatal(err)
	}
	set, err := ParseJWKS(jwks)
	if err != nil {
		t.Fatal(err)
	}
	if set.Len() != 2 {
		t.Fatalf("public JWKS has %d keys, want 2 (no HS256 secret): %s", set.Len(), jwks)
	}
	if strings.Contains(string(jwks), `"k"`) || strings.Contains(string(jwks), `"d"`) {
		t.Fatalf("public JWKS leaks private material: %s", jwks)
	}
	if err := set.AddSecret("hs-1", secret); err != nil {
		t.Fatal(err)
	}
	return testKeys{hs: hs, es: es, ed: ed, ecKey: ecKey, edKey: edKey, set: set}
}

func TestSignVerifyRoundTripEachAlgorithm(t *testing.T) {
	k := newTestKeys(t)
	for _, s := range []*Signer{k.hs, k.es, k.ed} {
		t.Run(s.Alg(), func(t *testing.T) {
			c := testCard()
			if err := SignCard(c, s); err != nil {
				t.Fatal(err)
			}
			h, err := ParseHeader(c.Signatures[0].Protected)
			if err != nil || h.Alg != s.Alg() || h.Kid != s.KID() || h.Typ != "JOSE" {
				t.Fatalf("header %+v, %v", h, err)
			}
			v := &Verifier{Keys: k.set}
			if _, err := v.VerifyCard(t.Context(), marshal(t, c)); err != nil {
				t.Fatalf("verify: %v", err)
			}
			// A changed field invalidates the signature.
			c.Description += "!"
			if _, err := v.VerifyCard(t.Context(), marshal(t, c)); err == nil {
				t.Fatal("a modified card verified")
			}
			// Re-ordering keys and whitespace do not matter (JCS).
			c.Description = strings.TrimSuffix(c.Description, "!")
			var m map[string]any
			_ = json.Unmarshal(marshal(t, c), &m)
			pretty, _ := json.MarshalIndent(m, "", "   ")
			if _, err := v.VerifyCard(t.Context(), pretty); err != nil {
				t.Fatalf("re-formatted card: %v", err)
			}
		})
	}
}

func TestKeyRotationTwoSignatures(t *testing.T) {
	k := newTestKeys(t)
	c := testCard()
	if err := SignCard(c, k.es, k.ed); err != nil {
		t.Fatal(err)
	}
	if len(c.Signatures) != 2 {
		t.Fatalf("%d signatures, want 2", len(c.Signatures))
	}
	raw := marshal(t, c)
	for _, only := range []*Signer{k.es, k.ed} {
		jwk, _ := only.PublicJWK()
		key, _, err := jwk.Key()
		if err != nil {
			t.Fatal(err)
		}
		ks := &KeySet{}
		ks.Add(key)
		res, err := (&Verifier{Keys: ks}).VerifyCard(t.Context(), raw)
		if err != nil {
			t.Fatalf("only %s trusted: %v", only.KID(), err)
		}
		okCount := 0
		for _, r := range res {
			if r.Err == nil {
				okCount++
			}
		}
		if okCount != 1 {
			t.Errorf("only %s trusted: %d signatures verified, want 1", only.KID(), okCount)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	k := newTestKeys(t)
	c := testCard()
	payload, err := CardPayload(c)
	if err != nil {
		t.Fatal(err)
	}
	hdr := func(h string) string { return b64.EncodeToString([]byte(h)) }
	sign := func(protected string, key []byte) string {
		m := hmacSum(key, []byte(protected+"."+b64.EncodeToString(payload)))
		return b64.EncodeToString(m)
	}
	ecJWK, _ := k.es.PublicJWK()
	ecPubJSON := marshal(t, ecJWK)
	// The verifier trusts only the EC and Ed25519 public keys here, plus
	// an RSA key under "rsa-1".
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	trusted := &KeySet{}
	for _, s := range []*Signer{k.es, k.ed} {
		j, _ := s.PublicJWK()
		key, _, _ := j.Key()
		trusted.Add(key)
	}
	trusted.Add(Key{KID: "rsa-1", Public: &rsaKey.PublicKey})
	rsaProt := hdr(`{"alg":"RS256","kid":"rsa-1","typ":"JOSE"}`)
	d := sha256.Sum256([]byte(rsaProt + "." + b64.EncodeToString(payload)))
	rsaSig, _ := rsa.SignPKCS1v15(rand.Reader, rsaKey, crypto.SHA256, d[:])

	cases := []struct {
		name string
		sig  a2a.AgentCardSignature
		want string // "" = verifies
	}{
		{"rs256 valid", a2a.AgentCardSignature{Protected: rsaProt, Signature: b64.EncodeToString(rsaSig)}, ""},
		{"alg none", a2a.AgentCardSignature{Protected: hdr(`{"alg":"none","kid":"es-1"}`), Signature: ""}, "none"},
		{"hs256 with the public EC key as secret", func() a2a.AgentCardSignature {
			p := hdr(`{"alg":"HS256","kid":"es-1","typ":"JOSE"}`)
			return a2a.AgentCardSignature{Protected: p, Signature: sign(p, ecPubJSON)}
		}(), "does not fit"},
		{"hs256 with the RSA public key as secret", func() a2a.AgentCardSignature {
			p := hdr(`{"alg":"HS256","kid":"rsa-1","typ":"JOSE"}`)
			der, _ := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
			return a2a.AgentCardSignature{Protected: p, Signature: sign(p, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))}
		}(), "does not fit"},
		{"es256 header over an ed25519 key", func() a2a.AgentCardSignature {
			p := hdr(`{"alg":"ES256","kid":"ed-1"}`)
			return a2a.AgentCardSignature{Protected: p, Signature: b64.EncodeToString(make([]byte, 64))}
		}(), "does not fit"},
		{"unknown kid", a2a.AgentCardSignature{Protected: hdr(`{"alg":"ES256","kid":"nope"}`), Signature: "AA"}, "no trusted key"},
		{"no kid", a2a.AgentCardSignature{Protected: hdr(`{"alg":"ES256"}`), Signature: "AA"}, "no kid"},
		{"crit", a2a.AgentCardSignature{Protected: hdr(`{"alg":"ES256","kid":"es-1","crit":["b64"]}`), Signature: "AA"}, "crit"},
		{"unlisted alg", a2a.AgentCardSignature{Protected: hdr(`{"alg":"HS512","kid":"es-1"}`), Signature: "AA"}, "not allowed"},
		{"garbage header", a2a.AgentCardSignature{Protected: "!!!", Signature: "AA"}, "base64url"},
		{"wrong signature bytes", a2a.AgentCardSignature{Protected: hdr(`{"alg":"ES256","kid":"es-1"}`), Signature: b64.EncodeToString(make([]byte, 64))}, "does not match"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cc := testCard()
			cc.Signatures = []a2a.AgentCardSignature{tc.sig}
			_, err := (&Verifier{Keys: trusted}).VerifyCard(context.Background(), marshal(t, cc))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want error containing %q, got %v", tc.want, err)
			}
		})
	}
	// A card without signatures.
	if _, err := (&Verifier{Keys: trusted}).VerifyCard(t.Context(), marshal(t, testCard())); err != ErrNoSignatures {
		t.Errorf("unsigned card: %v", err)
	}
}

func TestJKUAllowListAndRemoteJWKS(t *testing.T) {
	k := newTestKeys(t)
	jwks, _ := PublicJWKS([]*Signer{k.es})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(jwks)
	}))
	defer srv.Close()
	s, err := k.es.WithJKU(srv.URL + "/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	c := testCard()
	if err := SignCard(c, s); err != nil {
		t.Fatal(err)
	}
	raw := marshal(t, c)

	// Not on the allow-list: never fetched.
	if _, err := (&Verifier{}).VerifyCard(t.Context(), raw); err == nil || !strings.Contains(err.Error(), "allow-list") {
		t.Fatalf("jku outside the allow-list: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatal("a jku outside the allow-list was fetched")
	}
	v := &Verifier{AllowedJKUOrigins: []string{srv.URL}}
	if _, err := v.VerifyCard(t.Context(), raw); err != nil {
		t.Fatalf("allowed jku: %v", err)
	}
	if _, err := v.VerifyCard(t.Context(), raw); err != nil {
		t.Fatalf("allowed jku (cached): %v", err)
	}
	if hits.Load() != 1 {
		t.Fatalf("jwks fetched %d times, want 1 (cached)", hits.Load())
	}

	// A configured remote JWKS: an unknown kid refreshes at most once per
	// MinRefresh.
	hits.Store(0)
	now := time.Unix(1000, 0)
	r := NewRemoteJWKS(srv.URL+"/jwks.json", FetchOptions{Timeout: 2 * time.Second})
	r.now = func() time.Time { return now }
	for range 3 {
		if keys, _ := r.Lookup(t.Context(), "unknown"); len(keys) != 0 {
			t.Fatal("unknown kid found")
		}
	}
	if hits.Load() != 1 {
		t.Fatalf("fetched %d times for unknown kids within MinRefresh, want 1", hits.Load())
	}
	now = now.Add(31 * time.Second)
	_, _ = r.Lookup(t.Context(), "unknown")
	if hits.Load() != 2 {
		t.Fatalf("no refresh after MinRefresh: %d", hits.Load())
	}
	if keys, _ := r.Lookup(t.Context(), "es-1"); len(keys) != 1 || hits.Load() != 2 {
		t.Fatalf("known kid: %d keys, %d fetches", len(keys), hits.Load())
	}
	if _, err := (&Verifier{Remote: []*RemoteJWKS{r}}).VerifyCard(t.Context(), raw); err != nil {
		t.Fatalf("remote jwks: %v", err)
	}
}

func TestFetchJWKSLimits(t *testing.T) {
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"keys":[` + strings.Repeat(" ", 5000) + `]}`))
	}))
	defer big.Close()
	if _, err := FetchJWKS(t.Context(), big.URL, FetchOptions{MaxBytes: 1000}); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("oversized jwks: %v", err)
	}
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	}))
	defer slow.Close()
	start := time.Now()
	if _, err := FetchJWKS(t.Context(), slow.URL+"/?token=secret", FetchOptions{Timeout: 200 * time.Millisecond}); err == nil || strings.Contains(err.Error(), "secret") {
		t.Errorf("slow jwks: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("timeout not applied")
	}
}

func TestParseJWKSKinds(t *testing.T) {
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	doc := map[string]any{"keys": []any{
		map[string]any{"kty": "oct", "kid": "o", "k": b64.EncodeToString([]byte(strings.Repeat("k", 32)))},
		map[string]any{"kty": "RSA", "kid": "r", "n": b64.EncodeToString(rsaKey.N.Bytes()), "e": "AQAB"},
		map[string]any{"kty": "OKP", "kid": "e", "crv": "Ed25519", "x": b64.EncodeToString(make([]byte, 32))},
		map[string]any{"kty": "XYZ", "kid": "ignored"},
		map[string]any{"kty": "EC", "kid": "enc", "use": "enc", "crv": "P-256", "x": "bad", "y": "bad"},
	}}
	ks, err := ParseJWKS(marshal(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	if ks.Len() != 3 {
		t.Fatalf("%d keys, want 3", ks.Len())
	}
	bad := []string{
		`{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}`,
		`{"keys":[{"kty":"EC","crv":"P-256","x":"` + b64.EncodeToString(make([]byte, 32)) + `","y":"` + b64.EncodeToString(make([]byte, 32)) + `"}]}`,
		`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`,
		`{"keys":[{"kty":"oct","k":""}]}`,
		`[]`,
	}
	for _, b := range bad {
		if _, err := ParseJWKS([]byte(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}

func TestSignerErrors(t *testing.T) {
	if _, err := NewHMACSigner("k", []byte("short")); err == nil {
		t.Error("short HS256 secret accepted")
	}
	if _, err := NewHMACSigner("", []byte(strings.Repeat("s", 32))); err == nil {
		t.Error("empty kid accepted")
	}
	p384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if _, err := ParsePrivateKeyPEM("k", "", pemKey(t, p384)); err == nil {
		t.Error("P-384 key accepted for ES256")
	}
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	if _, err := ParsePrivateKeyPEM("k", "ES256", pemKey(t, ed)); err == nil || strings.Contains(err.Error(), "PRIVATE") {
		t.Errorf("alg mismatch: %v", err)
	}
	if _, err := ParsePrivateKeyPEM("k", "", []byte("not pem")); err == nil {
		t.Error("garbage accepted")
	}
}

// TestCanonicalPresenceRules checks the §8 field presence rules: optional
// false kept, required empty kept, plain defaults and unknown fields
// dropped, StringList {"list":[]} reduced to {}.
func TestCanonicalPresenceRules(t *testing.T) {
	in := `{"name":"A","description":"","version":"1","supportedInterfaces":[{"url":"u","protocolBinding":"JSONRPC","protocolVersion":"1.0","tenant":""}],
	"capabilities":{"streaming":false,"extensions":[]},"defaultInputModes":[],"defaultOutputModes":["text/plain"],"skills":[],
	"securityRequirements":[{"schemes":{"bearer":{"list":[]}}}],"securitySchemes":{"m":{"mtlsSecurityScheme":{}}},
	"url":"https://legacy","documentationUrl":"","signatures":[{"protected":"x","signature":"y"}],"provider":null}`
	got, err := CanonicalCard([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"capabilities":{"streaming":false},"defaultInputModes":[],"defaultOutputModes":["text/plain"],"description":"","documentationUrl":"","name":"A","securityRequirements":[{"schemes":{"bearer":{}}}],"securitySchemes":{"m":{"mtlsSecurityScheme":{}}},"skills":[],"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"u"}],"version":"1"}`
	if string(got) != want {
		t.Errorf("canonical:\n got %s\nwant %s", got, want)
	}
	sdk, err := SDKCanonicalCard([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	wantSDK := `{"capabilities":{"streaming":false},"defaultOutputModes":["text/plain"],"name":"A","supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"u"}],"version":"1"}`
	if string(sdk) != wantSDK {
		t.Errorf("sdk canonical:\n got %s\nwant %s", sdk, wantSDK)
	}
}

// go-jose v4 is an independent JWS implementation: our detached
// signatures verify with it, and its signatures verify with ours.
func TestInteropGoJose(t *testing.T) {
	k := newTestKeys(t)
	c := testCard()
	if err := SignCard(c, k.hs, k.es, k.ed); err != nil {
		t.Fatal(err)
	}
	payload, _ := CardPayload(c)
	keys := []any{[]byte(strings.Repeat("s", 32)), &k.ecKey.PublicKey, k.edKey.Public()}
	for i, sig := range c.Signatures {
		obj, err := jose.ParseDetached(sig.Protected+".."+sig.Signature, payload,
			[]jose.SignatureAlgorithm{jose.HS256, jose.ES256, jose.EdDSA})
		if err != nil {
			t.Fatalf("go-jose parse %d: %v", i, err)
		}
		if err := obj.DetachedVerify(payload, keys[i]); err != nil {
			t.Errorf("go-jose rejects our signature %d: %v", i, err)
		}
	}

	// go-jose signs, we verify.
	for _, tc := range []struct {
		alg jose.SignatureAlgorithm
		key any
		kid string
	}{{jose.ES256, k.ecKey, "es-1"}, {jose.EdDSA, k.edKey, "ed-1"}, {jose.HS256, []byte(strings.Repeat("s", 32)), "hs-1"}} {
		signer, err := jose.NewSigner(jose.SigningKey{Algorithm: tc.alg, Key: tc.key},
			(&jose.SignerOptions{}).WithType("JOSE").WithHeader("kid", tc.kid))
		if err != nil {
			t.Fatal(err)
		}
		obj, err := signer.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		compact, err := obj.DetachedCompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(compact, ".")
		cc := testCard()
		cc.Signatures = []a2a.AgentCardSignature{{Protected: parts[0], Signature: parts[2]}}
		if _, err := (&Verifier{Keys: k.set}).VerifyCard(t.Context(), marshal(t, cc)); err != nil {
			t.Errorf("go-jose %s signature rejected: %v", tc.alg, err)
		}
	}
}

func hmacSum(key, data []byte) []byte {
	m := newHMAC(key)
	m.Write(data)
	return m.Sum(nil)
}
