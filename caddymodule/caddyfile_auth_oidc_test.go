package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// AUTH-7: the jwt block's oidc_issuer options and its oauth2 card block
// parse into auth.JWT, and the card facts carry the discovery URL and the
// flows.
func TestCaddyfileJWTOIDC(t *testing.T) {
	d := caddyfile.NewTestDispenser(`a2a {
		card {
			name x
		}
		auth {
			jwt {
				oidc_issuer https://idp.example.com/realms/agents
				audience caddy-a2a
				discovery_timeout 5s
				jwks_refresh_interval 10s
				jwks_cache_ttl 5m
				jwks_max_stale 2h
				allow_private_networks 10.0.0.0/8 192.168.1.7
				oauth2 {
					token_url https://idp.example.com/realms/agents/protocol/openid-connect/token
					authorization_url https://idp.example.com/realms/agents/protocol/openid-connect/auth
					device_authorization_url https://idp.example.com/realms/agents/protocol/openid-connect/auth/device
					pkce_required
					scope a2a.read "read tasks"
					scope a2a.write
				}
			}
		}
	}`)
	d.Next()
	hs, err := unmarshalA2A(d)
	if err != nil {
		t.Fatal(err)
	}
	j := hs.auth.JWT
	if j == nil || j.OIDCIssuer != "https://idp.example.com/realms/agents" || time.Duration(j.DiscoveryTimeout) != 5*time.Second ||
		time.Duration(j.JWKSRefreshInterval) != 10*time.Second || time.Duration(j.JWKSCacheTTL) != 5*time.Minute ||
		time.Duration(j.JWKSMaxStale) != 2*time.Hour || len(j.AllowPrivateNetworks) != 2 {
		t.Fatalf("jwt: %+v", j)
	}
	o := j.OAuth2
	if o == nil || !o.PKCERequired || len(o.Scopes) != 2 || o.Scopes[0].Description != "read tasks" || o.Scopes[1].Name != "a2a.write" || !strings.HasSuffix(o.DeviceAuthorizationURL, "/device") {
		t.Fatalf("oauth2: %+v", o)
	}
	s := securityOf(hs.auth)
	if s == nil || s.OpenIDConnectURL != "https://idp.example.com/realms/agents/.well-known/openid-configuration" || s.OAuth2 != o {
		t.Fatalf("card security: %+v", s)
	}
}

func TestCaddyfileJWTOIDCErrors(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"with jwks_url":   {"jwt {\noidc_issuer https://i\njwks_url https://i/k\n}", "not both"},
		"bad issuer":      {"jwt {\noidc_issuer https://i/?q=1\n}", "without user information, query or fragment"},
		"bad duration":    {"jwt {\noidc_issuer https://i\njwks_max_stale soon\n}", "invalid duration"},
		"options alone":   {"jwt {\nsecret s\njwks_max_stale 1h\n}", "need oidc_issuer"},
		"oauth2 no token": {"jwt {\noidc_issuer https://i\noauth2 {\nscope a\n}\n}", "token_url is required"},
		"oauth2 unknown":  {"jwt {\noidc_issuer https://i\noauth2 {\ntoken_url https://i/t\nfoo\n}\n}", "unknown option"},
		"oauth2 scope":    {"jwt {\noidc_issuer https://i\noauth2 {\ntoken_url https://i/t\nscope\n}\n}", "usage is scope"},
		"bad cidr":        {"jwt {\noidc_issuer https://i\nallow_private_networks nope\n}", "allow_private_networks"},
	} {
		d := caddyfile.NewTestDispenser("a2a {\ncard {\nname x\n}\nauth {\n" + tc.src + "\n}\n}")
		d.Next()
		_, err := unmarshalA2A(d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", name, tc.want, err)
		}
	}
}
