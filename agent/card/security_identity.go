package card

import (
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// Scheme names of the identity provider's schemes (AUTH-7). A2A 1.0's
// OAuthFlows holds one flow, so each OAuth 2.0 flow is a scheme of its
// own; any one of them (or bearerAuth) satisfies the card's requirements.
const (
	SchemeOpenIDConnect           = "openIdConnect"
	SchemeOAuth2ClientCredentials = "oauth2ClientCredentials"
	SchemeOAuth2AuthorizationCode = "oauth2AuthorizationCode"
	SchemeOAuth2DeviceCode        = "oauth2DeviceCode"
)

func (s *Security) openIDConnectURL() string {
	if s == nil {
		return ""
	}
	return s.OpenIDConnectURL
}

func (s *Security) oauth2() *auth.OAuth2Card {
	if s == nil {
		return nil
	}
	return s.OAuth2
}

// addIdentitySchemes declares the identity provider of the bearer JWTs:
// openIdConnectSecurityScheme with its discovery URL, and one
// oauth2SecurityScheme per configured flow, each its own requirement
// (addReq). The tokens they yield are the bearer JWTs bearerAuth takes.
func addIdentitySchemes(c *a2a.AgentCard, rt Runtime, addReq func(string)) {
	if !rt.Bearer {
		return
	}
	if rt.OpenIDConnectURL != "" {
		raw, _ := json.Marshal(a2a.OpenIDConnectSecurityScheme{
			Description:      "Bearer JWTs of this OpenID Connect provider",
			OpenIDConnectURL: rt.OpenIDConnectURL,
		})
		c.SecuritySchemes[SchemeOpenIDConnect] = a2a.SecurityScheme{OpenIDConnect: raw}
		addReq(SchemeOpenIDConnect)
	}
	o := rt.OAuth2
	if o == nil {
		return
	}
	scopes := map[string]string{}
	for _, s := range o.Scopes {
		d := s.Description
		if d == "" {
			d = s.Name
		}
		scopes[s.Name] = d
	}
	add := func(name string, f a2a.OAuthFlows) {
		raw, _ := json.Marshal(a2a.OAuth2SecurityScheme{Flows: f, OAuth2MetadataURL: o.MetadataURL})
		c.SecuritySchemes[name] = a2a.SecurityScheme{OAuth2: raw}
		addReq(name)
	}
	if !o.NoClientCredentials {
		add(SchemeOAuth2ClientCredentials, a2a.OAuthFlows{ClientCredentials: &a2a.ClientCredentialsOAuthFlow{
			TokenURL: o.TokenURL, RefreshURL: o.RefreshURL, Scopes: scopes}})
	}
	if o.AuthorizationURL != "" {
		add(SchemeOAuth2AuthorizationCode, a2a.OAuthFlows{AuthorizationCode: &a2a.AuthorizationCodeOAuthFlow{
			AuthorizationURL: o.AuthorizationURL, TokenURL: o.TokenURL, RefreshURL: o.RefreshURL, Scopes: scopes, PKCERequired: o.PKCERequired}})
	}
	if o.DeviceAuthorizationURL != "" {
		add(SchemeOAuth2DeviceCode, a2a.OAuthFlows{DeviceCode: &a2a.DeviceCodeOAuthFlow{
			DeviceAuthorizationURL: o.DeviceAuthorizationURL, TokenURL: o.TokenURL, RefreshURL: o.RefreshURL, Scopes: scopes}})
	}
}
