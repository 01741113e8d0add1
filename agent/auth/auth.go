// Package auth checks the credentials that guard an A2A endpoint: bearer
// tokens, HTTP Basic (plaintext or bcrypt passwords) and API keys in a
// header, each mapped to a named principal.
//
// All comparisons are constant-time over SHA-256 digests, unknown Basic
// users cost one bcrypt comparison against a fake hash, and no secret ever
// appears in an error or warning. The package has no Caddy imports.
package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// Environment variables that provide default credentials when the
// configuration leaves them unset (unless Config.NoEnv is true).
const (
	EnvToken         = "IACCODE_A2A_HTTP_TOKEN"
	EnvBasicUsername = "IACCODE_A2A_BASIC_USERNAME"
	EnvBasicPassword = "IACCODE_A2A_BASIC_PASSWORD"
	EnvAPIKey        = "IACCODE_A2A_API_KEY"
	EnvAPIKeyHeader  = "IACCODE_A2A_API_KEY_HEADER"
)

// Defaults.
const (
	DefaultAPIKeyHeader = "X-API-Key"
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
}

// Any reports whether any scheme is enabled.
func (s Schemes) Any() bool { return s.Bearer || s.Basic || s.APIKey }

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

type secretCred struct {
	digest    [32]byte
	principal string
}

type basicCred struct {
	digest    [32]byte // plaintext password digest, when hash is nil
	hash      []byte   // bcrypt hash
	principal string
}

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
}

// fakeBcrypt is compared against for unknown users so they cost the same
// as known bcrypt users.
var fakeBcrypt = []byte("$2a$10$aetn5KWkJm/o6DlAdTcxpu6hCmamOkuEPxHTa19zNS5ey.RUBXzhK")

var fakeDigest = sha256.Sum256([]byte("caddy-a2a fake password"))

// IsBcrypt reports whether s looks like a bcrypt hash.
func IsBcrypt(s string) bool {
	if !(strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")) {
		return false
	}
	_, err := bcrypt.Cost([]byte(s))
	return err == nil
}

// New validates cfg (after applying environment defaults and resolving
// placeholders as opts say) and builds an Authenticator. Warnings are
// returned for the caller to log; they never contain secrets. Errors name
// the offending field but never its value.
func New(cfg Config, opts Options) (*Authenticator, []string, error) {
	cfg, warns := cfg.WithEnv(opts.Getenv)
	resolve := func(field, v string) (string, error) {
		if v == "" || opts.Replace == nil {
			return v, nil
		}
		out := strings.TrimRight(opts.Replace(v), "\r\n")
		if out == "" {
			return "", fmt.Errorf("%s: resolved to an empty value (check its placeholder)", field)
		}
		return out, nil
	}
	a := &Authenticator{users: map[string]basicCred{}, realm: cfg.Realm}
	if a.realm == "" {
		a.realm = DefaultRealm
	}
	if strings.ContainsAny(a.realm, "\"\\\r\n") {
		return nil, warns, errors.New("realm: must not contain quotes, backslashes or newlines")
	}
	a.header = cfg.APIKeyHeader
	if a.header == "" {
		a.header = DefaultAPIKeyHeader
	}
	if !validHeaderName(a.header) {
		return nil, warns, fmt.Errorf("api_key_header: %q is not a valid header name", a.header)
	}
	if strings.EqualFold(a.header, "Authorization") {
		return nil, warns, errors.New("api_key_header: must not be Authorization")
	}

	defName := cfg.DefaultPrincipal
	if defName == "" {
		defName = DefaultPrincipal
	}
	all := []Principal{{Name: defName, Token: cfg.Token, Basic: cfg.Basic, APIKey: cfg.APIKey}}
	all = append(all, cfg.Principals...)

	names := map[string]bool{}
	tokenOwner := map[[32]byte]string{}
	keyOwner := map[[32]byte]string{}
	var errs []error
	for i, p := range all {
		field := "principal " + quoteName(p.Name)
		if i == 0 {
			field = "default principal"
			if p.Token == "" && p.Basic == nil && p.APIKey == "" {
				continue
			}
		}
		if strings.TrimSpace(p.Name) == "" {
			errs = append(errs, fmt.Errorf("principals[%d] name: must not be empty", i-1))
			continue
		}
		if !validName(p.Name) {
			errs = append(errs, fmt.Errorf("%s name: only printable characters without spaces are allowed (max 128)", field))
			continue
		}
		if names[p.Name] {
			errs = append(errs, fmt.Errorf("%s: duplicate principal name", field))
			continue
		}
		names[p.Name] = true
		if p.Token == "" && p.Basic == nil && p.APIKey == "" {
			errs = append(errs, fmt.Errorf("%s: no credential (set token, basic or api_key)", field))
			continue
		}
		if p.Token != "" {
			tok, err := resolve(field+" token", p.Token)
			if err != nil {
				errs = append(errs, err)
			} else if err := checkSecret(field+" token", tok); err != nil {
				errs = append(errs, err)
			} else {
				d := sha256.Sum256([]byte(tok))
				if o, dup := tokenOwner[d]; dup {
					errs = append(errs, fmt.Errorf("%s token: same token as %s", field, o))
				} else {
					tokenOwner[d] = field
					a.tokens = append(a.tokens, secretCred{digest: d, principal: p.Name})
				}
			}
		}
		if p.APIKey != "" {
			key, err := resolve(field+" api_key", p.APIKey)
			if err != nil {
				errs = append(errs, err)
			} else if err := checkSecret(field+" api_key", key); err != nil {
				errs = append(errs, err)
			} else {
				d := sha256.Sum256([]byte(key))
				if o, dup := keyOwner[d]; dup {
					errs = append(errs, fmt.Errorf("%s api_key: same key as %s", field, o))
				} else {
					keyOwner[d] = field
					a.keys = append(a.keys, secretCred{digest: d, principal: p.Name})
				}
			}
		}
		if p.Basic != nil {
			if err := a.addBasic(field, p, resolve); err != nil {
				errs = append(errs, err)
			}
		}
		a.principals = append(a.principals, p.Name)
	}
	if cfg.JWT != nil {
		v, jwarns, err := newJWTValidator(cfg.JWT, resolve)
		warns = append(warns, jwarns...)
		if err != nil {
			errs = append(errs, err)
		}
		a.jwt = v
	}
	if err := errors.Join(errs...); err != nil {
		return nil, warns, err
	}
	a.schemes = Schemes{Bearer: len(a.tokens) > 0 || a.jwt != nil, Basic: len(a.users) > 0, APIKey: len(a.keys) > 0, APIKeyHeader: a.header, JWT: a.jwt != nil}
	return a, warns, nil
}

func (a *Authenticator) addBasic(field string, p Principal, resolve func(string, string) (string, error)) error {
	if p.Basic.Username == "" {
		return fmt.Errorf("%s basic username: must not be empty", field)
	}
	if p.Basic.Password == "" {
		return fmt.Errorf("%s basic password: required when a basic username is set", field)
	}
	user, err := resolve(field+" basic username", p.Basic.Username)
	if err != nil {
		return err
	}
	if strings.Contains(user, ":") || !validName(user) {
		return fmt.Errorf("%s basic username: must be printable, without spaces or ':'", field)
	}
	pass, err := resolve(field+" basic password", p.Basic.Password)
	if err != nil {
		return err
	}
	if _, dup := a.users[user]; dup {
		return fmt.Errorf("%s basic username: already used by another principal", field)
	}
	c := basicCred{principal: p.Name}
	if IsBcrypt(pass) {
		c.hash = []byte(pass)
	} else {
		c.digest = sha256.Sum256([]byte(pass))
	}
	a.users[user] = c
	return nil
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func checkSecret(field, s string) error {
	for _, c := range s {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("%s: must not contain spaces or control characters", field)
		}
	}
	return nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
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

// matchDigest compares d against every credential in constant time per
// comparison and without stopping early.
func matchDigest(creds []secretCred, d [32]byte) (string, bool) {
	found := ""
	ok := false
	for _, c := range creds {
		if subtle.ConstantTimeCompare(c.digest[:], d[:]) == 1 && !ok {
			found, ok = c.principal, true
		}
	}
	return found, ok
}

// Authenticate checks the request's credentials and returns the principal
// name. It returns false when auth is enabled and no credential matches.
func (a *Authenticator) Authenticate(r *http.Request) (string, bool) {
	if !a.Enabled() {
		return "", false
	}
	if a.schemes.APIKey {
		if v := r.Header.Get(a.header); v != "" {
			if p, ok := matchDigest(a.keys, sha256.Sum256([]byte(v))); ok {
				return p, true
			}
		}
	}
	authz := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(strings.TrimSpace(authz), " ")
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return "", false
	}
	switch {
	case strings.EqualFold(scheme, "Bearer") && a.schemes.Bearer:
		if p, ok := matchDigest(a.tokens, sha256.Sum256([]byte(cred))); ok {
			return p, true
		}
		if a.jwt != nil {
			p, ok := a.jwt.validate(r.Context(), cred)
			if ok && slices.Contains(a.principals, p) {
				// A token must not take over a configured principal's tasks
				// by naming it in `sub` (AUTH-3, AUTH-4).
				return "", false
			}
			return p, ok
		}
		return "", false
	case strings.EqualFold(scheme, "Basic") && a.schemes.Basic:
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return "", false
		}
		user, pass, found := strings.Cut(string(raw), ":")
		if !found {
			return "", false
		}
		return a.checkBasic(user, pass)
	}
	return "", false
}

func (a *Authenticator) checkBasic(user, pass string) (string, bool) {
	c, known := a.users[user]
	if !known {
		// same cost as a known bcrypt user
		_ = bcrypt.CompareHashAndPassword(fakeBcrypt, []byte(pass))
		d := sha256.Sum256([]byte(pass))
		subtle.ConstantTimeCompare(fakeDigest[:], d[:])
		return "", false
	}
	if c.hash != nil {
		if bcrypt.CompareHashAndPassword(c.hash, []byte(pass)) == nil {
			return c.principal, true
		}
		return "", false
	}
	d := sha256.Sum256([]byte(pass))
	if subtle.ConstantTimeCompare(c.digest[:], d[:]) == 1 {
		return c.principal, true
	}
	return "", false
}
