package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// Issue 30, OAuth to upstreams: `oauth2 { … }` parses in backend a2a,
// http and openai; a second Authorization credential is refused.
func TestCaddyfileUpstreamOAuth2(t *testing.T) {
	block := `{
		oauth2 {
			token_url https://idp.example.com/token
			client_id gateway
			client_secret {env.GW_SECRET}
			scopes a2a.read a2a.write
			audience upstream-agent
			allow_private_networks 10.0.0.0/8
		}
	}`
	a := new(A2ABackend)
	if err := a.UnmarshalCaddyfile(caddyfile.NewTestDispenser("a2a https://up.example " + block)); err != nil {
		t.Fatal(err)
	}
	o := a.OAuth2
	if o == nil || o.TokenURL != "https://idp.example.com/token" || o.ClientID != "gateway" || o.ClientSecret != "{env.GW_SECRET}" ||
		len(o.Scopes) != 2 || o.Audience != "upstream-agent" || len(o.AllowPrivateNetworks) != 1 {
		t.Fatalf("a2a oauth2: %+v", o)
	}
	h := new(HTTPBackend)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser("http https://up.example " + block)); err != nil || h.OAuth2 == nil {
		t.Fatalf("http oauth2: %v %+v", err, h.OAuth2)
	}
	oa := new(OpenAIBackend)
	if err := oa.UnmarshalCaddyfile(caddyfile.NewTestDispenser("openai https://up.example {\nmodel m\noauth2 {\ntoken_url https://idp.example.com/token\nclient_id a\nclient_secret b\n}\n}")); err != nil || oa.OAuth2 == nil {
		t.Fatalf("openai oauth2: %v %+v", err, oa.OAuth2)
	}
	for name, src := range map[string]string{
		"no secret": "a2a https://up.example {\noauth2 {\ntoken_url https://i/t\nclient_id a\n}\n}",
		"unknown":   "a2a https://up.example {\noauth2 {\ntoken_url https://i/t\nclient_id a\nclient_secret b\nfoo\n}\n}",
	} {
		if err := new(A2ABackend).UnmarshalCaddyfile(caddyfile.NewTestDispenser(src)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	a.Bearer = "static"
	if _, err := withUpstreamOAuth2(a, nil, "a2a"); err == nil || !strings.Contains(err.Error(), "not both") {
		t.Errorf("bearer and oauth2: %v", err)
	}
}
