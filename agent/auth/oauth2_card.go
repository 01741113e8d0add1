package auth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// OAuth2Card declares the OAuth 2.0 flows of the identity provider that
// issues the gateway's bearer JWTs, for the agent card's
// oauth2SecurityScheme (AUTH-7). A2A 1.0 allows one flow per scheme, so
// each flow set here becomes a scheme of its own: clientCredentials
// (token_url) as oauth2ClientCredentials, authorizationCode
// (authorization_url and token_url) as oauth2AuthorizationCode, deviceCode
// (device_authorization_url and token_url) as oauth2DeviceCode. It holds
// no credential and changes no check: tokens are still validated by the
// jwt keys (oidc_issuer, jwks_url, …).
type OAuth2Card struct {
	// TokenURL is the token endpoint. Required.
	TokenURL string `json:"token_url,omitempty"`
	// AuthorizationURL is the authorization endpoint; set, it declares
	// the authorization code flow.
	AuthorizationURL string `json:"authorization_url,omitempty"`
	// DeviceAuthorizationURL is the device authorization endpoint; set,
	// it declares the device code flow.
	DeviceAuthorizationURL string `json:"device_authorization_url,omitempty"`
	// RefreshURL is the refresh endpoint, when it differs from TokenURL.
	RefreshURL string `json:"refresh_url,omitempty"`
	// NoClientCredentials leaves the client credentials flow out (it is
	// declared by default: agents calling agents use it).
	NoClientCredentials bool `json:"no_client_credentials,omitempty"`
	// PKCERequired marks the authorization code flow as requiring PKCE.
	PKCERequired bool `json:"pkce_required,omitempty"`
	// MetadataURL is the provider's RFC 8414 authorization server
	// metadata URL (oauth2MetadataUrl). Optional.
	MetadataURL string `json:"metadata_url,omitempty"`
	// Scopes are the scopes a client may ask for, each with a
	// description, declared on every flow.
	Scopes []OAuth2Scope `json:"scopes,omitempty"`
}

// OAuth2Scope is one scope and what it grants.
type OAuth2Scope struct {
	// Name is the scope string, e.g. a2a.write. Required; no spaces.
	Name string `json:"name"`
	// Description says what the scope grants. Required by A2A's card
	// format (an empty one is written as the name).
	Description string `json:"description,omitempty"`
}

// Validate checks o (nil: nothing declared).
func (o *OAuth2Card) Validate() error {
	if o == nil {
		return nil
	}
	if o.TokenURL == "" {
		return errors.New("jwt oauth2: token_url is required")
	}
	for name, v := range map[string]string{
		"token_url": o.TokenURL, "authorization_url": o.AuthorizationURL,
		"device_authorization_url": o.DeviceAuthorizationURL, "refresh_url": o.RefreshURL, "metadata_url": o.MetadataURL,
	} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
			return fmt.Errorf("jwt oauth2 %s: must be an absolute http(s) URL without user information", name)
		}
	}
	if o.NoClientCredentials && o.AuthorizationURL == "" && o.DeviceAuthorizationURL == "" {
		return errors.New("jwt oauth2: no flow left (no_client_credentials without authorization_url or device_authorization_url)")
	}
	seen := map[string]bool{}
	for _, s := range o.Scopes {
		if s.Name == "" || strings.ContainsAny(s.Name, " \t\r\n\"\\") {
			return fmt.Errorf("jwt oauth2 scope %q: must be a non-empty scope token without spaces or quotes", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("jwt oauth2 scope %q: declared twice", s.Name)
		}
		seen[s.Name] = true
	}
	return nil
}
