package tests

// Issue 30, AUTH-7: the gateway behind a real OpenID provider
// (tests/internal/idp, zitadel/oidc's op): discovery, tokens from the
// provider's client credentials endpoint used by the official Go SDK, key
// rotation and an outage of the provider while the gateway runs, and the
// attacks of the closing note (another audience, alg confusion,
// kid injection, issuer mix-up); then a gateway whose `backend a2a`
// fetches its upstream token from the same provider.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/idp"
)

// The provider's service clients: the gateway's audience is caddy-a2a.
var (
	oidcAgent = idp.Client{ID: "svc-agent", Secret: "svc-agent-secret-0123456789", Audience: []string{"caddy-a2a"}}
	oidcOther = idp.Client{ID: "svc-other", Secret: "svc-other-secret-0123456789", Audience: []string{"another-service"}}
)

// oidcSite is a site whose bearer JWTs come from the provider at issuer.
func oidcSite(issuer, tokenURL string) string {
	return `a2a {
	card {
		name oidc-agent
		description "An agent behind an OpenID provider."
		security_requirements_form a2a-go
		skill echo {
			name Echo
			description "Echoes the prompt."
			tags echo
		}
	}
	auth {
		no_env
		jwt {
			oidc_issuer ` + issuer + `
			audience caddy-a2a
			jwks_refresh_interval 1s
			jwks_cache_ttl 2s
			jwks_max_stale 1h
			discovery_timeout 5s
			allow_private_networks 127.0.0.1
			oauth2 {
				token_url ` + tokenURL + `
				scope a2a.write "Send messages to the agent"
			}
		}
	}
	backend echo
}`
}

func oidcStart(t *testing.T, site string, env ...string) *harness.Gateway {
	t.Helper()
	return harness.StartGatewayWith(t, site, harness.Options{
		Global:       "storage file_system {{DIR}}/storage\na2a {\n\tdata_dir {{DIR}}/data\n}",
		StartTimeout: 30 * time.Second,
		Env:          env,
	})
}

// oidcSend sends text with token over JSON-RPC and returns the HTTP status
// and the completed task (nil when refused).
func oidcSend(t *testing.T, url, token, text string) (int, map[string]any) {
	t.Helper()
	msg := map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
	r := harness.At(url, harness.Bearer(token)).Call(t, "SendMessage", map[string]any{"message": msg})
	task, _ := r.Result["task"].(map[string]any)
	return r.StatusCode, task
}

func TestIdentityOIDCGateway(t *testing.T) {
	p := idp.Start(t, oidcAgent, oidcOther)
	gw := oidcStart(t, oidcSite(p.Issuer, p.TokenURL))

	t.Run("Card", func(t *testing.T) {
		raw := string(harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, "GET", "").Raw)
		for _, want := range []string{
			`"openIdConnect":{"openIdConnectSecurityScheme":{"description":"Bearer JWTs of this OpenID Connect provider","openIdConnectUrl":"` + p.Issuer + `/.well-known/openid-configuration"}}`,
			`"oauth2ClientCredentials":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"` + p.TokenURL + `","scopes":{"a2a.write":"Send messages to the agent"}}}}}`,
			`{"schemes":{"oauth2ClientCredentials":[]}}`,
		} {
			if !strings.Contains(raw, want) {
				t.Errorf("card lacks %s\n%s", want, raw)
			}
		}
		out, err := harness.Run(t, gw.Dir, "a2a", "card", "validate", gw.URL)
		if err != nil || strings.Contains(out, "error ") {
			t.Errorf("card validate: %v\n%s", err, out)
		}
		// Issue 30 done-when: --probe passes too, with a provider token.
		tok := p.Token(t, oidcAgent.ID, oidcAgent.Secret, "a2a.write")
		out, err = harness.Run(t, gw.Dir, "a2a", "card", "validate", "--probe", gw.URL, "-H", "Authorization: Bearer "+tok)
		if err != nil || !strings.Contains(out, "ok: no errors") {
			t.Errorf("card validate --probe: %v\n%s", err, out)
		}
	})

	t.Run("GoSDKWithProviderToken", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		card, err := agentcard.DefaultResolver.Resolve(ctx, gw.URL)
		if err != nil {
			t.Fatalf("a2a-go cannot read the card: %v", err)
		}
		cc, ok := card.SecuritySchemes["oauth2ClientCredentials"].(a2a.OAuth2SecurityScheme)
		if !ok {
			t.Fatalf("a2a-go reads oauth2ClientCredentials as %#v", card.SecuritySchemes["oauth2ClientCredentials"])
		}
		flow, ok := cc.Flows.(a2a.ClientCredentialsOAuthFlow)
		if !ok || flow.TokenURL != p.TokenURL {
			t.Fatalf("a2a-go reads the flow as %#v", cc.Flows)
		}
		// The client gets its token where the card says, with the scope
		// it declares, and hands it to the SDK under that scheme.
		tok := p.Token(t, oidcAgent.ID, oidcAgent.Secret, "a2a.write")
		store := a2aclient.NewInMemoryCredentialsStore()
		store.Set("s1", "oauth2ClientCredentials", a2aclient.AuthCredential(tok))
		client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithCallInterceptors(&a2aclient.AuthInterceptor{Service: store}))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = client.Destroy() }()
		msg := &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hello via oidc"))}
		if _, err := client.SendMessage(ctx, msg); err == nil {
			t.Error("SendMessage without the provider's token succeeded")
		}
		res, err := client.SendMessage(a2aclient.AttachSessionID(ctx, "s1"), msg)
		if err != nil {
			t.Fatalf("SendMessage with the provider's token: %v", err)
		}
		// The echo backend answers and waits for the next input.
		if task, ok := res.(*a2a.Task); !ok || task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil ||
			len(task.Status.Message.Parts) != 1 || task.Status.Message.Parts[0].Text() != "Echo: hello via oidc" {
			t.Fatalf("result %#v", res)
		}
	})

	t.Run("Attacks", func(t *testing.T) {
		// A token the same provider issued for another audience.
		if code, _ := oidcSend(t, gw.URL, p.Token(t, oidcOther.ID, oidcOther.Secret), "other audience"); code != http.StatusUnauthorized {
			t.Errorf("token for another audience: status %d", code)
		}
		now := time.Now()
		claims := jwt.MapClaims{"iss": p.Issuer, "aud": "caddy-a2a", "sub": "mallory", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix()}
		// Alg confusion: HS256 keyed with the provider's public key.
		pub := p.PublicKey()
		for _, key := range [][]byte{pub.N.Bytes(), []byte(jwtPEM(t, pub))} {
			tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
			tok.Header["kid"] = p.KeyID()
			s, _ := tok.SignedString(key)
			if code, _ := oidcSend(t, gw.URL, s, "alg confusion"); code != http.StatusUnauthorized {
				t.Errorf("HS256 with the public key: status %d", code)
			}
		}
		// kid injection: path- and URL-like kids, signed by a stranger.
		stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
		others := p.Hits("/evil") + p.Hits("/etc/passwd")
		for _, kid := range []string{"../../../../etc/passwd", p.Issuer + "/evil", "/keys?x=1", p.KeyID() + "/../" + p.KeyID()} {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
			tok.Header["kid"] = kid
			s, _ := tok.SignedString(stranger)
			if code, _ := oidcSend(t, gw.URL, s, "kid injection"); code != http.StatusUnauthorized {
				t.Errorf("kid %q: status %d", kid, code)
			}
		}
		if n := p.Hits("/evil") + p.Hits("/etc/passwd"); n != others {
			t.Errorf("a kid made the gateway fetch another URL (%d requests)", n-others)
		}
	})

	t.Run("RotationWhileRunning", func(t *testing.T) {
		old := p.Token(t, oidcAgent.ID, oidcAgent.Secret)
		if code, task := oidcSend(t, gw.URL, old, "before rotation"); code != http.StatusOK || task == nil {
			t.Fatalf("before rotation: status %d", code)
		}
		time.Sleep(1100 * time.Millisecond) // jwks_refresh_interval
		p.Rotate(t, true)
		fresh := p.Token(t, oidcAgent.ID, oidcAgent.Secret)
		keys := p.Hits("/keys")
		if code, task := oidcSend(t, gw.URL, fresh, "after rotation"); code != http.StatusOK || task == nil {
			t.Fatalf("a token of the rotated key: status %d", code)
		}
		if p.Hits("/keys") != keys+1 {
			t.Errorf("the rotation cost %d key fetches, want 1", p.Hits("/keys")-keys)
		}
		// The old key left the provider's JWKS: its tokens are refused.
		if code, _ := oidcSend(t, gw.URL, old, "old key"); code != http.StatusUnauthorized {
			t.Errorf("a token of the retired key: status %d", code)
		}
		// Tokens with unknown kids within the interval cost no fetch.
		stranger, _ := rsa.GenerateKey(rand.Reader, 2048)
		keys = p.Hits("/keys")
		for i := range 10 {
			tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{"iss": p.Issuer, "aud": "caddy-a2a", "sub": "x", "exp": time.Now().Add(time.Minute).Unix()})
			tok.Header["kid"] = "unknown-" + string(rune('a'+i))
			s, _ := tok.SignedString(stranger)
			oidcSend(t, gw.URL, s, "flood")
		}
		if n := p.Hits("/keys") - keys; n > 1 {
			t.Errorf("10 unknown kids within 1s made %d key fetches, want at most 1", n)
		}
	})

	t.Run("ProviderOutage", func(t *testing.T) {
		tok := p.Token(t, oidcAgent.ID, oidcAgent.Secret)
		p.SetDown(true)
		defer p.SetDown(false)
		time.Sleep(2500 * time.Millisecond) // past jwks_cache_ttl: the keys are stale
		start := time.Now()
		if code, task := oidcSend(t, gw.URL, tok, "during the outage"); code != http.StatusOK || task == nil {
			t.Fatalf("during the outage (cached keys, within jwks_max_stale): status %d", code)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("a request during the outage took %v", d)
		}
	})
}

// jwtPEM is the PEM form of pub, the other key an alg-confusion attacker
// tries.
func jwtPEM(t *testing.T, pub *rsa.PublicKey) string {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

// TestIdentityOIDCIssuerMixUp: a discovery document naming another issuer
// (here the real provider's document served from another address) fails
// the start with an error naming the configured issuer; so does a
// provider that cannot be reached, within discovery_timeout.
func TestIdentityOIDCIssuerMixUp(t *testing.T) {
	t.Parallel()
	p := idp.Start(t, oidcAgent)
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(p.Issuer + r.URL.Path)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.WriteHeader(resp.StatusCode)
		var doc map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&doc)
		_ = json.NewEncoder(w).Encode(doc)
	}))
	defer mirror.Close()
	out, err := harness.Adapt(t, "http://127.0.0.1:1 {\n"+oidcSite(mirror.URL, p.TokenURL)+"\n}\n", "--validate")
	if err == nil || !strings.Contains(out, "another issuer") || !strings.Contains(out, mirror.URL) {
		t.Errorf("issuer mix-up: %v\n%s", err, out)
	}
	dead := "http://127.0.0.1:" + strconv.Itoa(harness.FreePort(t))
	start := time.Now()
	out, err = harness.Adapt(t, "http://127.0.0.1:1 {\n"+oidcSite(dead, p.TokenURL)+"\n}\n", "--validate")
	if err == nil || !strings.Contains(out, dead) {
		t.Errorf("unreachable provider: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("an unreachable provider held the start for %v", d)
	}
}

// TestIdentityUpstreamOAuth2: `backend a2a` gets its upstream token from
// the provider (client credentials) and calls an upstream gateway that
// accepts only the provider's tokens; the token is reused across turns.
func TestIdentityUpstreamOAuth2(t *testing.T) {
	t.Parallel()
	p := idp.Start(t, oidcAgent)
	upstream := oidcStart(t, oidcSite(p.Issuer, p.TokenURL))
	front := oidcStart(t, `a2a {
	card {
		name front
	}
	backend a2a `+upstream.URL+` {
		oauth2 {
			token_url `+p.TokenURL+`
			client_id `+oidcAgent.ID+`
			client_secret {env.OIDC_UPSTREAM_SECRET}
			scopes a2a.write
			allow_private_networks 127.0.0.1
		}
		timeout 30s
	}
}`, "OIDC_UPSTREAM_SECRET="+oidcAgent.Secret)
	for i, text := range []string{"first through oauth", "second through oauth"} {
		msg := map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
		task := harness.At(front.URL).SendTask(t, map[string]any{"message": msg})
		b, _ := json.Marshal(task)
		if statusText(task) != "Echo: "+text {
			t.Fatalf("turn %d through the upstream: %s", i, b)
		}
	}
	if n := p.Hits("/oauth/token"); n != 1 {
		t.Errorf("token endpoint asked %d times for two turns, want 1 (cached)", n)
	}
	if strings.Contains(front.Output(), oidcAgent.Secret) {
		t.Error("the client secret appears in the gateway's log")
	}
	// With a wrong client secret there is no token: the turn fails, and
	// neither the answer nor the log shows the secret.
	const wrong = "wrong-secret-0123456789"
	bad := oidcStart(t, `a2a {
	card {
		name front-bad
	}
	backend a2a `+upstream.URL+` {
		oauth2 {
			token_url `+p.TokenURL+`
			client_id `+oidcAgent.ID+`
			client_secret `+wrong+`
			allow_private_networks 127.0.0.1
		}
	}
}`)
	msg := map[string]any{"messageId": a2aMsgID(), "role": "ROLE_USER", "parts": []any{map[string]any{"text": "no token"}}}
	task := harness.At(bad.URL).SendTask(t, map[string]any{"message": msg})
	b, _ := json.Marshal(task)
	if taskState(task) != "TASK_STATE_FAILED" || strings.Contains(string(b), wrong) || strings.Contains(bad.Output(), wrong) {
		t.Errorf("a turn without a token: %s", b)
	}
	t.Logf("refused upstream turn: %s", statusText(task))
}
