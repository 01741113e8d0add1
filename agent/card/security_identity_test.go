package card

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// AUTH-7: an oidc_issuer declares openIdConnectSecurityScheme with the
// discovery URL; oauth2 flows from config become one oauth2SecurityScheme
// per flow (A2A 1.0 OAuthFlows is a oneof), each with the scopes and
// their descriptions, each its own requirement; nothing without bearer.
func TestBuildIdentitySchemes(t *testing.T) {
	rt := Runtime{BaseURL: "http://h:1/", Bearer: true, BearerJWT: true,
		OpenIDConnectURL: "https://idp.example/realms/a/.well-known/openid-configuration",
		OAuth2: &auth.OAuth2Card{
			TokenURL:               "https://idp.example/token",
			AuthorizationURL:       "https://idp.example/auth",
			DeviceAuthorizationURL: "https://idp.example/device",
			PKCERequired:           true,
			Scopes:                 []auth.OAuth2Scope{{Name: "a2a.read", Description: "read tasks"}, {Name: "a2a.write"}},
		}}
	b, _ := json.Marshal(Build(validConfig(), rt))
	s := string(b)
	for _, want := range []string{
		`"openIdConnect":{"openIdConnectSecurityScheme":{"description":"Bearer JWTs of this OpenID Connect provider","openIdConnectUrl":"https://idp.example/realms/a/.well-known/openid-configuration"}}`,
		`"oauth2ClientCredentials":{"oauth2SecurityScheme":{"flows":{"clientCredentials":{"tokenUrl":"https://idp.example/token","scopes":{"a2a.read":"read tasks","a2a.write":"a2a.write"}}}}}`,
		`"oauth2AuthorizationCode":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"authorizationUrl":"https://idp.example/auth","tokenUrl":"https://idp.example/token","scopes":{"a2a.read":"read tasks","a2a.write":"a2a.write"},"pkceRequired":true}}}}`,
		`"oauth2DeviceCode":{"oauth2SecurityScheme":{"flows":{"deviceCode":{"deviceAuthorizationUrl":"https://idp.example/device","tokenUrl":"https://idp.example/token","scopes":{"a2a.read":"read tasks","a2a.write":"a2a.write"}}}}}`,
		`{"schemes":{"openIdConnect":{"list":[]}}}`,
		`{"schemes":{"oauth2ClientCredentials":{"list":[]}}}`,
		`{"schemes":{"oauth2DeviceCode":{"list":[]}}}`,
		`"bearerAuth":{"httpAuthSecurityScheme":{"scheme":"Bearer","bearerFormat":"JWT"}}`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("card lacks %s\n%s", want, s)
		}
	}
	rt.OAuth2.NoClientCredentials = true
	b, _ = json.Marshal(Build(validConfig(), rt))
	if strings.Contains(string(b), "oauth2ClientCredentials") {
		t.Error("no_client_credentials still declares the client credentials flow")
	}
	rt.Bearer = false
	b, _ = json.Marshal(Build(validConfig(), rt))
	if strings.Contains(string(b), "openIdConnect") || strings.Contains(string(b), "oauth2") {
		t.Error("identity schemes declared without bearer auth")
	}
}
