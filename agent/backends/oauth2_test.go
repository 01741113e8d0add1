package backends

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// OAuth to upstreams (issue 30): the token is fetched with the client
// credentials grant (client id and secret, scopes, audience), cached
// while valid, sent as a bearer token, and refetched once expired; a
// refusal by the provider shows its error code, never the secret.
func TestOAuth2TransportCachesToken(t *testing.T) {
	var issued atomic.Int32
	expires := 3600
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		_ = r.ParseForm()
		if id != "gw" || secret != "s3cret-value" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"invalid_client","error_description":"bad secret s3cret-value"}`)
			return
		}
		if r.Form.Get("grant_type") != "client_credentials" || r.Form.Get("scope") != "a2a.read a2a.write" || r.Form.Get("audience") != "up" {
			t.Errorf("token request form: %v", r.Form)
		}
		n := issued.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "tok-" + string(rune('0'+n)), "token_type": "Bearer", "expires_in": expires})
	}))
	defer idp.Close()
	var seen []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Authorization"))
	}))
	defer up.Close()
	o := &OAuth2{TokenURL: idp.URL + "/token", ClientID: "gw", ClientSecret: "{env.SECRET}", Scopes: []string{"a2a.read", "a2a.write"},
		Audience: "up", AllowPrivateNetworks: []string{"127.0.0.1"}}
	rt, err := o.Transport(http.DefaultTransport, func(s string) string { return strings.ReplaceAll(s, "{env.SECRET}", "s3cret-value") })
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: rt}
	for range 3 {
		resp, err := c.Get(up.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if issued.Load() != 1 || len(seen) != 3 || seen[0] != "Bearer tok-1" || seen[2] != "Bearer tok-1" {
		t.Fatalf("tokens issued %d, upstream saw %v", issued.Load(), seen)
	}
	// An expired token is replaced (expires_in 1 is within x/oauth2's
	// early-expiry delta, so every request asks again).
	expires = 1
	o2 := *o
	rt2, _ := o2.Transport(http.DefaultTransport, func(string) string { return "s3cret-value" })
	c2 := &http.Client{Transport: rt2}
	for range 2 {
		resp, err := c2.Get(up.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if issued.Load() != 3 {
		t.Errorf("an expiring token was not refetched: %d issued", issued.Load())
	}
	bad := *o
	rt3, _ := bad.Transport(http.DefaultTransport, func(string) string { return "wrong" })
	_, err = (&http.Client{Transport: rt3}).Get(up.URL)
	if err == nil || !strings.Contains(err.Error(), "invalid_client") || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "wrong") {
		t.Errorf("refused token request: %v", err)
	}
}

// The token endpoint is behind the SSRF guard: loopback needs
// allow_private_networks, and a token URL resolving to a private address
// is refused before anything is sent.
func TestOAuth2TransportSSRFGuardAndConfig(t *testing.T) {
	o := &OAuth2{TokenURL: "http://127.0.0.1:1/token", ClientID: "gw", ClientSecret: "x"}
	if _, err := o.Transport(http.DefaultTransport, nil); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Errorf("loopback token URL without allow: %v", err)
	}
	o.TokenURL = "http://169.254.169.254/token"
	if _, err := o.Transport(http.DefaultTransport, nil); err == nil {
		t.Error("link-local token URL accepted")
	}
	for name, bad := range map[string]*OAuth2{
		"no url":    {ClientID: "a", ClientSecret: "b"},
		"user info": {TokenURL: "https://u:p@idp.example/token", ClientID: "a", ClientSecret: "b"},
		"no secret": {TokenURL: "https://idp.example/token", ClientID: "a"},
		"bad scope": {TokenURL: "https://idp.example/token", ClientID: "a", ClientSecret: "b", Scopes: []string{"a b"}},
		"bad cidr":  {TokenURL: "https://idp.example/token", ClientID: "a", ClientSecret: "b", AllowPrivateNetworks: []string{"x"}},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	empty := &OAuth2{TokenURL: "https://idp.example/token", ClientID: "a", ClientSecret: "{env.NONE}"}
	if _, err := empty.Transport(http.DefaultTransport, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("empty secret: %v", err)
	}
}
