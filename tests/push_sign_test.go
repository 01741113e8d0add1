package tests

// PUSH-8 end to end: signed push notifications verified by a real webhook
// receiver against the JWKS the gateway serves, with golang-jwt.

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// jwtReceiver verifies every delivery as a careful receiver would: the
// signature against the gateway's JWKS (by kid), iss, aud (its own URL),
// exp, the body hash, and jti replays.
type jwtReceiver struct {
	srv    *httptest.Server
	jwks   func() *jws.KeySet
	issuer string

	mu       sync.Mutex
	seen     map[string]bool
	accepted []receivedDelivery
	rejected []error
}

// receivedDelivery is one delivery as received: its headers and body.
type receivedDelivery struct {
	jwt, auth string
	body      []byte
}

func (r *jwtReceiver) verify(token string, body []byte, aud string) error {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		for _, k := range r.jwks().Lookup(kid) {
			if k.Public != nil {
				return k.Public, nil
			}
		}
		return nil, fmt.Errorf("unknown kid %q", kid)
	}, jwt.WithValidMethods([]string{"ES256", "EdDSA"}), jwt.WithIssuer(r.issuer), jwt.WithAudience(aud), jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if claims["body_sha256"] != hex.EncodeToString(sum[:]) {
		return errors.New("body_sha256 does not match the body")
	}
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	if exp.Sub(iat.Time) > 5*time.Minute {
		return errors.New("token lives longer than 5 minutes")
	}
	if claims["taskId"] == "" || claims["taskId"] == nil {
		return errors.New("no taskId claim")
	}
	jti, _ := claims["jti"].(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	if jti == "" || r.seen[jti] {
		return fmt.Errorf("replayed or missing jti %q", jti)
	}
	r.seen[jti] = true
	return nil
}

func newJWTReceiver(t *testing.T, jwks func() *jws.KeySet, issuer string) *jwtReceiver {
	r := &jwtReceiver{jwks: jwks, issuer: issuer, seen: map[string]bool{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(req.Body, 1<<20))
		tok := req.Header.Get("X-A2A-Notification-JWT")
		err := r.verify(tok, b, "http://"+req.Host+req.URL.Path)
		r.mu.Lock()
		if err != nil {
			r.rejected = append(r.rejected, err)
		} else {
			r.accepted = append(r.accepted, receivedDelivery{jwt: tok, auth: req.Header.Get("Authorization"), body: b})
		}
		r.mu.Unlock()
		if err != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func writeECKey(t *testing.T, dir string) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "push-ec.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPushSignedDeliveries (PUSH-8): each delivery carries a JWT that a
// receiver verifies against /.well-known/jwks.json; a config without
// authentication gets it as its bearer too; a replayed token, a modified
// body and an expired token are rejected by the same verification.
func TestPushSignedDeliveries(t *testing.T) {
	t.Parallel()
	keyFile := writeECKey(t, t.TempDir())
	const issuer = "https://agent.example.com"
	var gw *harness.Gateway
	var jwksMu sync.Mutex
	var jwksCache *jws.KeySet
	jwks := func() *jws.KeySet {
		jwksMu.Lock()
		defer jwksMu.Unlock()
		if jwksCache == nil {
			r, err := harness.At(gw.URL+"/.well-known/jwks.json").Send("GET", "")
			if err != nil || r.StatusCode != 200 {
				return &jws.KeySet{}
			}
			if jwksCache, err = jws.ParseJWKS(r.Raw); err != nil {
				return &jws.KeySet{}
			}
		}
		return jwksCache
	}
	recv := newJWTReceiver(t, jwks, issuer)
	gw = harness.StartGatewayWith(t, `a2a {
	card {
		name push-sign
		public_url `+issuer+`
	}
	push {
		allow_private_networks 127.0.0.0/8
		max_attempts 2
		sign es256 {
			kid push-1
			key_file `+keyFile+`
			ttl 3s
		}
	}
}`, harness.Options{})

	// The JWKS holds the public key only.
	r := harness.At(gw.URL+"/.well-known/jwks.json").Do(t, "GET", "")
	if r.StatusCode != 200 || jwks().Len() != 1 {
		t.Fatalf("jwks: HTTP %d %s", r.StatusCode, r.Raw)
	}
	if k := jwks().Lookup("push-1"); len(k) != 1 || k[0].Public == nil || k[0].Secret != nil {
		t.Fatalf("jwks key: %+v", k)
	}

	pushSend(t, gw.URL+"/", map[string]any{"url": recv.srv.URL + "/hook", "token": "tok-1"})
	deadline := time.Now().Add(15 * time.Second)
	var got receivedDelivery
	for {
		recv.mu.Lock()
		n, rej := len(recv.accepted), append([]error(nil), recv.rejected...)
		if n > 0 {
			got = recv.accepted[0]
		}
		recv.mu.Unlock()
		if len(rej) > 0 {
			t.Fatalf("the receiver rejected a genuine delivery: %v", rej)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no signed delivery arrived")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got.auth != "Bearer "+got.jwt {
		t.Errorf("Authorization = %q, want the JWT as bearer (config without authentication)", got.auth)
	}
	aud := recv.srv.URL + "/hook"
	// A replay of the same delivery is refused (jti already seen).
	if err := recv.verify(got.jwt, got.body, aud); err == nil {
		t.Error("a replayed token was accepted")
	}
	// A modified body does not match body_sha256 (fresh receiver state).
	fresh := &jwtReceiver{jwks: jwks, issuer: issuer, seen: map[string]bool{}}
	if err := fresh.verify(got.jwt, append([]byte(nil), append(got.body, ' ')...), aud); err == nil {
		t.Error("a modified body was accepted")
	}
	// Another audience is refused.
	if err := fresh.verify(got.jwt, got.body, "http://elsewhere.example/hook"); err == nil {
		t.Error("a token for another callback was accepted")
	}
	// Once past its 3s lifetime the token is refused.
	time.Sleep(4 * time.Second) // sleep: the token's 3s lifetime must pass (elapsed time is tested)
	if err := fresh.verify(got.jwt, got.body, aud); err == nil || !errors.Is(err, jwt.ErrTokenExpired) {
		t.Errorf("an expired token: %v, want ErrTokenExpired", err)
	}
}
