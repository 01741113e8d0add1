package card

import (
	"os"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// Security lists the auth schemes advertised on the card (its
// securitySchemes and securityRequirements). It never holds a credential.
type Security struct {
	// Bearer advertises bearerAuth (HTTP Bearer).
	Bearer bool `json:"bearer,omitempty"`
	// Basic advertises basicAuth (HTTP Basic).
	Basic bool `json:"basic,omitempty"`
	// APIKey advertises apiKeyAuth (an API key header).
	APIKey bool `json:"api_key,omitempty"`
	// APIKeyHeader names the API key header. Default:
	// $IACCODE_A2A_API_KEY_HEADER when from_env, else X-API-Key.
	APIKeyHeader string `json:"api_key_header,omitempty"`
	// JWT marks bearerAuth as taking JWTs (bearerFormat: JWT).
	JWT bool `json:"jwt,omitempty"`
	// MTLS advertises mtlsAuth (mtlsSecurityScheme, AUTH-9): a client
	// certificate the site's TLS server verifies.
	MTLS bool `json:"mtls,omitempty"`
	// MTLSWithBearer requires mtlsAuth together with the bearer schemes
	// (one requirement naming both) instead of as an alternative (AUTH-9,
	// mtls require_with_bearer).
	MTLSWithBearer bool `json:"mtls_with_bearer,omitempty"`
	// OpenIDConnectURL, when set, declares the openIdConnect scheme: the
	// discovery URL of the issuer of the bearer JWTs (AUTH-7, oidc_issuer).
	OpenIDConnectURL string `json:"openid_connect_url,omitempty"`
	// OAuth2 declares the OAuth 2.0 flows of the issuer of the bearer JWTs
	// as oauth2SecurityScheme entries, one per flow (AUTH-7).
	OAuth2 *auth.OAuth2Card `json:"oauth2,omitempty"`
	// FromEnv also advertises schemes whose IACCODE_A2A_* environment
	// variables are set, exactly as a2a_auth does without no_env.
	FromEnv bool `json:"from_env,omitempty"`
}

// Schemes turns the declaration into auth.Schemes, applying the
// environment when FromEnv. A nil Security advertises nothing.
func (s *Security) Schemes() auth.Schemes {
	if s == nil {
		return auth.Schemes{APIKeyHeader: auth.DefaultAPIKeyHeader}
	}
	var getenv func(string) string
	if s.FromEnv {
		getenv = os.Getenv
	}
	env := auth.Config{APIKeyHeader: s.APIKeyHeader, NoEnv: !s.FromEnv}.Schemes(getenv)
	env.Bearer = env.Bearer || s.Bearer
	env.Basic = env.Basic || s.Basic
	env.APIKey = env.APIKey || s.APIKey
	env.JWT = s.JWT
	env.Bearer = env.Bearer || s.JWT
	env.MTLS = s.MTLS
	env.MTLSWithBearer = s.MTLS && s.MTLSWithBearer
	return env
}
