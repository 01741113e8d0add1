// Package auth checks the credentials that guard an A2A endpoint: bearer
// tokens, HTTP Basic (plaintext or bcrypt passwords) and API keys in a
// header, each mapped to a named principal.
//
// All comparisons are constant-time over SHA-256 digests, unknown Basic
// users cost one bcrypt comparison against a fake hash, and no secret ever
// appears in an error or warning. The package has no Caddy imports.
package auth

import (
	"errors"
	"fmt"
	"strings"
)

// Authenticator checks request credentials.
type Authenticator struct {
	tokens     []secretCred
	keys       []secretCred
	users      map[string]basicCred
	header     string
	realm      string
	schemes    Schemes
	principals []string
	jwt        *jwtValidator
	mtls       *mtlsMapper // AUTH-9; nil: client certificates are no credential
}

// New validates cfg (after applying environment defaults and resolving
// placeholders as opts say) and builds an Authenticator. Warnings are
// returned for the caller to log; they never contain secrets. Errors name
// the offending field but never its value.
func New(cfg Config, opts Options) (*Authenticator, []string, error) {
	cfg, warns := cfg.WithEnv(opts.Getenv)
	resolve := placeholderResolver(opts.Replace)
	a, err := newAuthenticator(cfg)
	if err != nil {
		return nil, warns, err
	}
	b := newCredentialBuilder(a, resolve)
	var errs []error
	for i, p := range allPrincipals(cfg) {
		errs = append(errs, b.add(i, p)...)
	}
	if cfg.JWT != nil {
		v, jwarns, err := newJWTValidator(cfg.JWT, resolve)
		warns = append(warns, jwarns...)
		if err != nil {
			errs = append(errs, err)
		}
		a.jwt = v
	}
	if cfg.MTLS != nil {
		m, err := newMTLSMapper(cfg.MTLS)
		errs = append(errs, err)
		a.mtls = m
	}
	if err := errors.Join(errs...); err != nil {
		return nil, warns, err
	}
	a.schemes = Schemes{Bearer: len(a.tokens) > 0 || a.jwt != nil, Basic: len(a.users) > 0, APIKey: len(a.keys) > 0, APIKeyHeader: a.header, JWT: a.jwt != nil,
		MTLS: a.mtls != nil, MTLSWithBearer: a.mtls != nil && a.mtls.withBearer}
	if a.mtls != nil && a.mtls.withBearer {
		if err := a.checkBearerPair(); err != nil {
			return nil, warns, err
		}
	}
	return a, warns, nil
}

// resolveFunc resolves the placeholders of one secret; field names it in
// errors.
type resolveFunc func(field, v string) (string, error)

// placeholderResolver returns the resolveFunc that applies replace (nil:
// none), trims trailing newlines and rejects a value that resolves to
// nothing.
func placeholderResolver(replace func(string) string) resolveFunc {
	return func(field, v string) (string, error) {
		if v == "" || replace == nil {
			return v, nil
		}
		out := strings.TrimRight(replace(v), "\r\n")
		if out == "" {
			return "", fmt.Errorf("%s: resolved to an empty value (check its placeholder)", field)
		}
		return out, nil
	}
}

// newAuthenticator returns an Authenticator without credentials, with the
// realm and API key header of cfg checked and defaulted.
func newAuthenticator(cfg Config) (*Authenticator, error) {
	a := &Authenticator{users: map[string]basicCred{}, realm: cfg.Realm}
	if a.realm == "" {
		a.realm = DefaultRealm
	}
	if strings.ContainsAny(a.realm, "\"\\\r\n") {
		return nil, errors.New("realm: must not contain quotes, backslashes or newlines")
	}
	a.header = cfg.APIKeyHeader
	if a.header == "" {
		a.header = DefaultAPIKeyHeader
	}
	if !validHeaderName(a.header) {
		return nil, fmt.Errorf("api_key_header: %q is not a valid header name", a.header)
	}
	if strings.EqualFold(a.header, "Authorization") {
		return nil, errors.New("api_key_header: must not be Authorization")
	}
	return a, nil
}

// allPrincipals returns the default principal (built from cfg's Token,
// Basic and APIKey) followed by cfg.Principals.
func allPrincipals(cfg Config) []Principal {
	defName := cfg.DefaultPrincipal
	if defName == "" {
		defName = DefaultPrincipal
	}
	all := []Principal{{Name: defName, Token: cfg.Token, Basic: cfg.Basic, APIKey: cfg.APIKey}}
	return append(all, cfg.Principals...)
}

// Enabled reports whether any credential is configured; when false every
// request passes without a principal.
func (a *Authenticator) Enabled() bool { return a != nil && a.schemes.Any() }

// Schemes reports the enabled schemes.
func (a *Authenticator) Schemes() Schemes {
	if a == nil {
		return Schemes{APIKeyHeader: DefaultAPIKeyHeader}
	}
	return a.schemes
}

// Principals returns the configured principal names.
func (a *Authenticator) Principals() []string { return append([]string(nil), a.principals...) }

// APIKeyHeader is the header carrying API keys.
func (a *Authenticator) APIKeyHeader() string { return a.header }

// Challenges returns one WWW-Authenticate value per enabled scheme.
func (a *Authenticator) Challenges() []string {
	var out []string
	if a.schemes.Bearer {
		out = append(out, fmt.Sprintf("Bearer realm=%q", a.realm))
	}
	if a.schemes.Basic {
		out = append(out, fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", a.realm))
	}
	if a.schemes.APIKey {
		out = append(out, fmt.Sprintf("APIKey realm=%q, header=%q", a.realm, a.header))
	}
	return out
}
