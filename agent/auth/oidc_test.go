package auth

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// testIdP is a discovery document and a JWKS served on loopback: the unit
// tests' view of an OpenID provider (the end-to-end tests use a real one,
// tests/internal/idp). Its keys can be rotated and it can go down.
type testIdP struct {
	srv       *httptest.Server
	issuer    string // what the discovery document says; default srv.URL
	mu        sync.Mutex
	keys      map[string]*rsa.PrivateKey
	down      atomic.Bool
	jwksHits  atomic.Int32
	otherHits atomic.Int32
	jwksURI   string // default srv.URL+"/keys"
}

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	p := &testIdP{keys: map[string]*rsa.PrivateKey{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		switch r.URL.Path {
		case WellKnownOpenIDConfiguration:
			iss, ju := p.issuer, p.jwksURI
			if iss == "" {
				iss = p.srv.URL
			}
			if ju == "" {
				ju = p.srv.URL + "/keys"
			}
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": iss, "jwks_uri": ju})
		case "/keys":
			p.jwksHits.Add(1)
			p.mu.Lock()
			var keys []any
			for kid, k := range p.keys {
				keys = append(keys, map[string]any{"kty": "RSA", "kid": kid, "use": "sig",
					"n": b64url.EncodeToString(k.N.Bytes()), "e": "AQAB"})
			}
			p.mu.Unlock()
			_ = json.NewEncoder(w).Encode(map[string]any{"keys": keys})
		default:
			p.otherHits.Add(1)
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(p.srv.Close)
	p.addKey(t, "k1")
	return p
}

func (p *testIdP) addKey(t *testing.T, kid string) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.keys[kid] = k
	p.mu.Unlock()
	return k
}

func (p *testIdP) removeKey(kid string) {
	p.mu.Lock()
	delete(p.keys, kid)
	p.mu.Unlock()
}

func (p *testIdP) token(t *testing.T, kid string, mod func(jwt.MapClaims)) string {
	t.Helper()
	p.mu.Lock()
	k := p.keys[kid]
	p.mu.Unlock()
	c := claims(func(c jwt.MapClaims) {
		c["iss"] = p.srv.URL
		if mod != nil {
			mod(c)
		}
	})
	return signTok(t, jwt.SigningMethodRS256, kid, k, c)
}

func (p *testIdP) jwt(mod func(*JWT)) *JWT {
	j := &JWT{Audience: "a2a-gateway", OIDC: OIDC{OIDCIssuer: p.srv.URL, AllowPrivateNetworks: []string{"127.0.0.0/8"}}}
	if mod != nil {
		mod(j)
	}
	return j
}

// AUTH-7: the keys come from the discovered jwks_uri, `iss` defaults to
// the discovered issuer, aud/exp are checked as for any JWT, and a
// rotated key is fetched once on its first unknown kid, at most once per
// jwks_refresh_interval.
func TestOIDCDiscoveryAndRotation(t *testing.T) {
	p := newTestIdP(t)
	a, _, err := New(Config{JWT: p.jwt(func(j *JWT) { j.JWKSRefreshInterval = Duration(time.Second) })}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.jwksHits.Load() != 1 {
		t.Fatalf("keys fetched %d times at provision, want 1", p.jwksHits.Load())
	}
	if who, ok := a.Authenticate(bearerReq(p.token(t, "k1", nil))); !ok || who != "alice" {
		t.Fatalf("a token of the issuer: %q %v", who, ok)
	}
	for name, mod := range map[string]func(jwt.MapClaims){
		"another issuer":   func(c jwt.MapClaims) { c["iss"] = "https://other.example" },
		"no issuer":        func(c jwt.MapClaims) { delete(c, "iss") },
		"another audience": func(c jwt.MapClaims) { c["aud"] = "another-service" },
		"expired":          func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() },
		"not yet valid":    func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() },
	} {
		if _, ok := a.Authenticate(bearerReq(p.token(t, "k1", mod))); ok {
			t.Errorf("%s: accepted", name)
		}
	}
	// Rotation: k2 appears at the provider; its first token is checked
	// after one refetch (jwks_refresh_interval has passed since the start).
	time.Sleep(1100 * time.Millisecond)
	p.addKey(t, "k2")
	p.removeKey("k1")
	if who, ok := a.Authenticate(bearerReq(p.token(t, "k2", nil))); !ok || who != "alice" {
		t.Fatalf("a token of the rotated key: %q %v", who, ok)
	}
	hits := p.jwksHits.Load()
	if hits != 2 {
		t.Fatalf("keys fetched %d times after the rotation, want 2", hits)
	}
	// Unknown kids within the interval cost no fetch (rate limit).
	p.addKey(t, "k3")
	hits = p.jwksHits.Load()
	for i := range 20 {
		if _, ok := a.Authenticate(bearerReq(p.token(t, "k3", nil))); ok && i == 0 {
			t.Error("a key unknown to the cache accepted within the refresh interval")
		}
	}
	if got := p.jwksHits.Load(); got != hits {
		t.Errorf("unknown kids within jwks_refresh_interval fetched the keys %d more times, want 0", got-hits)
	}
}

// AUTH-7: while the provider is down the last keys fetched keep serving
// for jwks_max_stale past jwks_cache_ttl; after that every token is
// refused (fail closed), and the provider's return restores service.
func TestOIDCOutageServesCachedKeys(t *testing.T) {
	p := newTestIdP(t)
	a, _, err := New(Config{JWT: p.jwt(func(j *JWT) {
		j.JWKSCacheTTL = Duration(500 * time.Millisecond)
		j.JWKSMaxStale = Duration(1500 * time.Millisecond)
		j.JWKSRefreshInterval = Duration(time.Second)
		j.DiscoveryTimeout = Duration(time.Second)
	})}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	tok := p.token(t, "k1", nil)
	p.down.Store(true)
	time.Sleep(700 * time.Millisecond) // past the TTL, within max stale
	start := time.Now()
	if _, ok := a.Authenticate(bearerReq(tok)); !ok {
		t.Fatal("the cached keys were not used during the outage")
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("a token of a cached key waited %v for the refresh during the outage", d)
	}
	time.Sleep(1500 * time.Millisecond) // past TTL + max stale
	if _, ok := a.Authenticate(bearerReq(tok)); ok {
		t.Fatal("keys older than jwks_max_stale still accepted during the outage")
	}
	p.down.Store(false)
	time.Sleep(1100 * time.Millisecond) // the refresh interval
	if _, ok := a.Authenticate(bearerReq(tok)); !ok {
		t.Fatal("service not restored when the provider came back")
	}
}

// AUTH-7: the discovery document must name the configured issuer exactly
// (issuer mix-up); the start fails with the issuer URL in the error.
func TestOIDCIssuerMixUpRefused(t *testing.T) {
	p := newTestIdP(t)
	for name, iss := range map[string]string{
		"another issuer":  "https://evil.example",
		"trailing slash":  p.srv.URL + "/",
		"case difference": strings.ToUpper(p.srv.URL[:4]) + p.srv.URL[4:],
	} {
		p.issuer = iss
		_, _, err := New(Config{JWT: p.jwt(nil)}, Options{})
		if err == nil || !strings.Contains(err.Error(), "another issuer") || !strings.Contains(err.Error(), p.srv.URL) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// AUTH-7 SSRF guard: loopback is refused unless allowed, and a jwks_uri
// pointing at a private or link-local address (cloud metadata) is refused
// even when the issuer itself is allowed.
func TestOIDCSSRFGuard(t *testing.T) {
	p := newTestIdP(t)
	_, _, err := New(Config{JWT: p.jwt(func(j *JWT) { j.AllowPrivateNetworks = nil })}, Options{})
	if err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("loopback issuer without allow_private_networks: %v", err)
	}
	for _, ju := range []string{"http://169.254.169.254/latest/meta-data", "http://10.0.0.1/keys", "http://localhost/keys", "file:///etc/passwd", "http://user:pw@127.0.0.1/keys"} {
		p.jwksURI = ju
		_, _, err := New(Config{JWT: p.jwt(nil)}, Options{})
		if err == nil || !strings.Contains(err.Error(), "jwks_uri") {
			t.Errorf("jwks_uri %s: %v", ju, err)
		}
		if err != nil && strings.Contains(err.Error(), "pw@") {
			t.Errorf("jwks_uri %s: error shows user information: %v", ju, err)
		}
	}
}

// AUTH-7: discovery is bounded: a provider that never answers fails the
// start after discovery_timeout with an error naming the issuer; a
// document over the size limit, a redirect and a 404 are refused too.
func TestOIDCDiscoveryBounded(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	start := time.Now()
	_, _, err := New(Config{JWT: &JWT{OIDC: OIDC{OIDCIssuer: hang.URL, DiscoveryTimeout: Duration(time.Second), AllowPrivateNetworks: []string{"127.0.0.1"}}}}, Options{})
	if err == nil || !strings.Contains(err.Error(), hang.URL) {
		t.Fatalf("hanging provider: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("discovery took %v with discovery_timeout 1s", d)
	}
	big := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big" + WellKnownOpenIDConfiguration:
			_, _ = w.Write([]byte(`{"issuer":"x","pad":"` + strings.Repeat("a", maxDiscoveryBytes) + `"}`))
		case "/redirect" + WellKnownOpenIDConfiguration:
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer big.Close()
	for path, want := range map[string]string{"/big": "larger than", "/redirect": "status 302", "/none": "status 404"} {
		_, _, err := New(Config{JWT: &JWT{OIDC: OIDC{OIDCIssuer: big.URL + path, AllowPrivateNetworks: []string{"127.0.0.1"}}}}, Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want %q, got %v", path, want, err)
		}
	}
}

// Attacks on the token itself: HS256 signed with the provider's public
// key (alg confusion) and kids that look like paths or URLs are refused,
// and such a kid makes the gateway fetch nothing but the configured
// jwks_uri.
func TestOIDCTokenAttacks(t *testing.T) {
	p := newTestIdP(t)
	a, _, err := New(Config{JWT: p.jwt(nil)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	pub := p.keys["k1"].PublicKey
	p.mu.Unlock()
	pubDER := pub.N.Bytes()
	for _, key := range [][]byte{pubDER, []byte(b64url.EncodeToString(pubDER))} {
		hs := signTok(t, jwt.SigningMethodHS256, "k1", key, claims(func(c jwt.MapClaims) { c["iss"] = p.srv.URL }))
		if _, ok := a.Authenticate(bearerReq(hs)); ok {
			t.Error("HS256 signed with the provider's public key accepted (alg confusion)")
		}
	}
	k1 := p.keys["k1"]
	for _, kid := range []string{"../../../etc/passwd", "http://169.254.169.254/latest", p.srv.URL + "/evil", "k1\x00", "/keys"} {
		tok := signTok(t, jwt.SigningMethodRS256, kid, k1, claims(func(c jwt.MapClaims) { c["iss"] = p.srv.URL }))
		if _, ok := a.Authenticate(bearerReq(tok)); ok {
			t.Errorf("kid %q accepted", kid)
		}
	}
	if n := p.otherHits.Load(); n != 0 {
		t.Errorf("a kid made the gateway fetch %d other URLs", n)
	}
	none := "eyJhbGciOiJub25lIiwia2lkIjoiazEifQ." + b64url.EncodeToString([]byte(`{"sub":"alice","iss":"`+p.srv.URL+`","aud":"a2a-gateway","exp":9999999999}`)) + "."
	if _, ok := a.Authenticate(bearerReq(none)); ok {
		t.Error("alg none accepted")
	}
}

func TestOIDCConfigErrors(t *testing.T) {
	for name, j := range map[string]*JWT{
		"query":             {OIDC: OIDC{OIDCIssuer: "https://idp.example/?x=1"}},
		"user info":         {OIDC: OIDC{OIDCIssuer: "https://u:secretpw@idp.example/"}},
		"relative":          {OIDC: OIDC{OIDCIssuer: "/realms/x"}},
		"with jwks_url":     {JWKSURL: "https://idp.example/keys", OIDC: OIDC{OIDCIssuer: "https://idp.example"}},
		"timeout":           {OIDC: OIDC{OIDCIssuer: "https://idp.example", DiscoveryTimeout: Duration(time.Hour)}},
		"refresh too fast":  {OIDC: OIDC{OIDCIssuer: "https://idp.example", JWKSRefreshInterval: Duration(time.Millisecond)}},
		"bad cidr":          {OIDC: OIDC{OIDCIssuer: "https://idp.example", AllowPrivateNetworks: []string{"nope"}}},
		"options alone":     {Secret: testSecret, OIDC: OIDC{JWKSMaxStale: Duration(time.Hour)}},
		"oauth2 no token":   {Secret: testSecret, OIDC: OIDC{OAuth2: &OAuth2Card{AuthorizationURL: "https://idp.example/auth"}}},
		"oauth2 bad scope":  {Secret: testSecret, OIDC: OIDC{OAuth2: &OAuth2Card{TokenURL: "https://idp.example/token", Scopes: []OAuth2Scope{{Name: "a b"}}}}},
		"oauth2 no flow":    {Secret: testSecret, OIDC: OIDC{OAuth2: &OAuth2Card{TokenURL: "https://idp.example/token", NoClientCredentials: true}}},
		"oauth2 bad url":    {Secret: testSecret, OIDC: OIDC{OAuth2: &OAuth2Card{TokenURL: "ftp://idp.example/token"}}},
		"oauth2 dup scopes": {Secret: testSecret, OIDC: OIDC{OAuth2: &OAuth2Card{TokenURL: "https://idp.example/token", Scopes: []OAuth2Scope{{Name: "a"}, {Name: "a"}}}}},
	} {
		_, _, err := New(Config{JWT: j}, Options{})
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "secretpw") || strings.Contains(err.Error(), testSecret) {
			t.Errorf("%s: error shows a secret: %v", name, err)
		}
	}
}
