package auth

import (
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/internal/authenv"
)

// Environment variables that provide default credentials when the
// configuration leaves them unset (unless Config.NoEnv is true); the
// client reads the same list (internal/authenv).
const (
	EnvToken         = authenv.Token
	EnvBasicUsername = authenv.BasicUsername
	EnvBasicPassword = authenv.BasicPassword
	EnvAPIKey        = authenv.APIKey
	EnvAPIKeyHeader  = authenv.APIKeyHeader
)

// Defaults.
const (
	DefaultAPIKeyHeader = authenv.DefaultAPIKeyHeader
	DefaultPrincipal    = "default"
	DefaultRealm        = "a2a"
)

// Basic is an HTTP Basic credential.
type Basic struct {
	// Username is the Basic user name. Required. Placeholders ({env.*},
	// {file.*}) are resolved at provision time.
	Username string `json:"username,omitempty"`
	// Password is the plaintext password or a bcrypt hash ($2a$, $2b$ or
	// $2y$ prefix, detected automatically). Required. Placeholders are
	// resolved at provision time.
	Password string `json:"password,omitempty"`
}

// Principal is a named caller with one or more credentials.
type Principal struct {
	// Name identifies the caller; it becomes the task owner and the
	// {http.auth.user.id} placeholder. Required, unique.
	Name string `json:"name,omitempty"`
	// Token is a bearer token for this principal. Placeholders allowed.
	Token string `json:"token,omitempty"`
	// Basic is an HTTP Basic credential for this principal.
	Basic *Basic `json:"basic,omitempty"`
	// APIKey is an API key (sent in the APIKeyHeader header). Placeholders
	// allowed.
	APIKey string `json:"api_key,omitempty"`
}

// Config is the auth configuration. It is embedded in the a2a_auth
// handler's JSON configuration.
type Config struct {
	// Token is the bearer token of the default principal. Placeholders
	// allowed ({env.X}, {file.path}). Default: $IACCODE_A2A_HTTP_TOKEN.
	Token string `json:"token,omitempty"`
	// Basic is the Basic credential of the default principal. Default:
	// $IACCODE_A2A_BASIC_USERNAME and $IACCODE_A2A_BASIC_PASSWORD, when
	// both are set.
	Basic *Basic `json:"basic,omitempty"`
	// APIKey is the API key of the default principal. Placeholders
	// allowed. Default: $IACCODE_A2A_API_KEY.
	APIKey string `json:"api_key,omitempty"`
	// APIKeyHeader is the request header carrying API keys. Default:
	// $IACCODE_A2A_API_KEY_HEADER, else X-API-Key.
	APIKeyHeader string `json:"api_key_header,omitempty"`
	// Principals are additional named callers.
	Principals []Principal `json:"principals,omitempty"`
	// DefaultPrincipal names the principal of Token, Basic and APIKey.
	// Default: default.
	DefaultPrincipal string `json:"default_principal,omitempty"`
	// Realm is used in WWW-Authenticate challenges. Default: a2a.
	Realm string `json:"realm,omitempty"`
	// NoEnv disables the IACCODE_A2A_* environment defaults.
	NoEnv bool `json:"no_env,omitempty"`
	// JWT, when set, also accepts bearer tokens that are valid JWTs; the
	// principal is the token's `sub` claim. See JWT.
	JWT *JWT `json:"jwt,omitempty"`
	// MTLS, when set, also accepts the client certificate the site's TLS
	// server verified (Caddy's tls client_auth), mapped to a principal
	// (AUTH-9). See MTLS.
	MTLS *MTLS `json:"mtls,omitempty"`
}

// Schemes says which schemes are enabled.
type Schemes struct {
	// Bearer is true when at least one bearer token is configured.
	Bearer bool
	// Basic is true when at least one Basic credential is configured.
	Basic bool
	// APIKey is true when at least one API key is configured.
	APIKey bool
	// APIKeyHeader is the API key header name in effect.
	APIKeyHeader string
	// JWT is true when bearer JWTs are accepted (Bearer is then true too).
	JWT bool
	// MTLS is true when verified client certificates are accepted (AUTH-9).
	MTLS bool
	// MTLSWithBearer is true when a request needs both a verified client
	// certificate and a bearer credential (mtls require_with_bearer).
	MTLSWithBearer bool
}

// Any reports whether any scheme is enabled.
func (s Schemes) Any() bool { return s.Bearer || s.Basic || s.APIKey || s.MTLS }

// Options tune New.
type Options struct {
	// Getenv looks environment variables up; nil means no environment.
	Getenv func(string) string
	// Replace resolves placeholders in secrets ({env.X}, {file.path});
	// nil leaves values unchanged.
	Replace func(string) string
}

// WithEnv returns a copy of c with the environment defaults applied
// (unless c.NoEnv), plus warnings for half-set environment credentials.
func (c Config) WithEnv(getenv func(string) string) (Config, []string) {
	if c.NoEnv || getenv == nil {
		return c, nil
	}
	var warns []string
	if c.Token == "" {
		c.Token = getenv(EnvToken)
	}
	if c.APIKey == "" {
		c.APIKey = getenv(EnvAPIKey)
	}
	if c.APIKeyHeader == "" {
		c.APIKeyHeader = getenv(EnvAPIKeyHeader)
	}
	if c.Basic == nil {
		u, p := getenv(EnvBasicUsername), getenv(EnvBasicPassword)
		switch {
		case u != "" && p != "":
			c.Basic = &Basic{Username: u, Password: p}
		case u != "" || p != "":
			warns = append(warns, fmt.Sprintf("basic auth from environment ignored: %s and %s must both be set", EnvBasicUsername, EnvBasicPassword))
		}
	}
	return c, warns
}

// Schemes reports which schemes c enables, applying the environment
// defaults through getenv (nil: none) unless c.NoEnv. It reads only the
// presence of credentials, never their values.
func (c Config) Schemes(getenv func(string) string) Schemes {
	c, _ = c.WithEnv(getenv)
	s := Schemes{APIKeyHeader: c.APIKeyHeader}
	if s.APIKeyHeader == "" {
		s.APIKeyHeader = DefaultAPIKeyHeader
	}
	s.JWT = c.JWT != nil
	s.MTLS = c.MTLS != nil
	s.MTLSWithBearer = c.MTLS != nil && c.MTLS.RequireWithBearer
	s.Bearer = c.Token != "" || s.JWT
	s.Basic = c.Basic != nil
	s.APIKey = c.APIKey != ""
	for _, p := range c.Principals {
		s.Bearer = s.Bearer || p.Token != ""
		s.Basic = s.Basic || p.Basic != nil
		s.APIKey = s.APIKey || p.APIKey != ""
	}
	return s
}

// EnvUsed names the IACCODE_A2A_* variables that WithEnv takes into c
// (none with c.NoEnv), each with what it enables, e.g.
// "IACCODE_A2A_HTTP_TOKEN (bearer token of principal default)": the
// names only, never the values. The gateway logs them at start, since
// they turn auth on for every site that does not set no_env.
func (c Config) EnvUsed(getenv func(string) string) []string {
	if c.NoEnv || getenv == nil {
		return nil
	}
	who := c.DefaultPrincipal
	if who == "" {
		who = "default"
	}
	var used []string
	if c.Token == "" && getenv(EnvToken) != "" {
		used = append(used, EnvToken+" (bearer token of principal "+who+")")
	}
	if c.Basic == nil && getenv(EnvBasicUsername) != "" && getenv(EnvBasicPassword) != "" {
		used = append(used, EnvBasicUsername+" and "+EnvBasicPassword+" (HTTP Basic credentials of principal "+who+")")
	}
	if c.APIKey == "" && getenv(EnvAPIKey) != "" {
		used = append(used, EnvAPIKey+" (API key of principal "+who+")")
	}
	if c.APIKeyHeader == "" && getenv(EnvAPIKeyHeader) != "" {
		used = append(used, EnvAPIKeyHeader+" (the API key header)")
	}
	return used
}
