package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// JWT limits and defaults.
const (
	// DefaultClockSkew is the leeway applied to exp, nbf and iat.
	DefaultClockSkew = 30 * time.Second
	// MaxClockSkew bounds the configurable leeway.
	MaxClockSkew = 5 * time.Minute
	// maxJWTBytes bounds a bearer JWT.
	maxJWTBytes = 8 << 10
)

// Duration is a time.Duration that reads from JSON as a Go duration
// string ("30s", "2m") or an integer number of nanoseconds.
type Duration time.Duration

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("invalid duration %q", s)
		}
		*d = Duration(v)
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return errors.New("duration must be a string like \"30s\" or integer nanoseconds")
	}
	*d = Duration(n)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// JWT configures validation of bearer tokens that are JSON Web Tokens
// (AUTH-3). A valid token's `sub` claim is the principal. Static bearer
// tokens, if any, are checked first.
type JWT struct {
	// Secret is an HS256 secret (at least 32 bytes). Placeholders
	// ({env.X}, {file.path}) are resolved at provision time.
	Secret string `json:"secret,omitempty"`
	// SecretKID, when set, is the only `kid` header accepted with Secret.
	SecretKID string `json:"secret_kid,omitempty"`
	// JWKSFile is the path of a local JWKS (RSA, EC and OKP keys verify
	// RS256, ES256 and EdDSA tokens; oct keys verify HS256). Placeholders
	// are resolved at provision time. At most 1 MiB.
	JWKSFile string `json:"jwks_file,omitempty"`
	// JWKSURL is the URL of a remote JWKS, fetched with a 10s timeout and
	// a 1 MiB limit, cached for 10 minutes and refreshed on an unknown
	// `kid` at most every 30 seconds.
	JWKSURL string `json:"jwks_url,omitempty"`
	// Issuer is the required `iss` claim. Recommended.
	Issuer string `json:"issuer,omitempty"`
	// Audience is a required `aud` value. Recommended.
	Audience string `json:"audience,omitempty"`
	// Algorithms limits the accepted `alg` values. Default: HS256 when a
	// secret is set, plus RS256, ES256 and EdDSA when a JWKS is set.
	// `none` is never accepted.
	Algorithms []string `json:"algorithms,omitempty"`
	// ClockSkew is the leeway for exp, nbf and iat. Default: 30s; at most 5m.
	ClockSkew Duration `json:"clock_skew,omitempty"`
	// PrincipalClaim is the claim whose string value names the principal
	// (AUTH-7, AUTH-8). Default: sub; azp or client_id name the client of
	// a service (client-credentials) token. The value must be a printable
	// name without spaces (at most 128 bytes), else the token is refused.
	PrincipalClaim string `json:"principal_claim,omitempty"`
	// OIDC holds the OpenID Connect discovery options (oidc_issuer, …;
	// AUTH-7), written in the jwt object itself.
	OIDC
}

// jwtValidator checks bearer JWTs.
type jwtValidator struct {
	secret    []byte
	secretKID string
	keys      *jws.KeySet
	remote    *jws.RemoteJWKS
	issuer    string // the discovered issuer (oidc_issuer), the default iss
	parser    *jwt.Parser
	algs      []string
	skew      time.Duration
	// principalClaim names the principal (JWT.PrincipalClaim; "": sub).
	principalClaim string
}

// ValidateClockSkew checks clock_skew (0: the default) without loading
// any key, so a config can be checked before it is provisioned.
func (c *JWT) ValidateClockSkew() error {
	if c.ClockSkew < 0 || time.Duration(c.ClockSkew) > MaxClockSkew {
		return fmt.Errorf("jwt clock_skew: must be between 0 and %v", MaxClockSkew)
	}
	return nil
}

// newJWTValidator builds a validator from c; resolve resolves
// placeholders. Warnings never contain secrets.
func newJWTValidator(c *JWT, resolve func(field, v string) (string, error)) (*jwtValidator, []string, error) {
	v, warns, err := loadJWTKeys(c, resolve)
	if err != nil {
		return nil, nil, err
	}
	algs, err := jwtAlgorithms(c.Algorithms, v.secret != nil, v.keys != nil || v.remote != nil)
	if err != nil {
		return nil, nil, err
	}
	v.algs = algs
	if err := c.ValidateClockSkew(); err != nil {
		return nil, nil, err
	}
	if err := checkPrincipalClaim(c.PrincipalClaim); err != nil {
		return nil, nil, err
	}
	v.principalClaim = c.PrincipalClaim
	skew := time.Duration(c.ClockSkew)
	if skew == 0 {
		skew = DefaultClockSkew
	}
	pc := c
	if c.Issuer == "" && v.issuer != "" {
		withIss := *c
		withIss.Issuer = v.issuer // AUTH-7: iss defaults to the discovered issuer
		pc = &withIss
	}
	opts, claimWarns := jwtParserOptions(pc, algs, skew)
	v.parser = jwt.NewParser(opts...)
	v.skew = skew
	return v, append(warns, claimWarns...), nil
}

// loadJWTKeys returns a validator holding the keys c names (the secret,
// the JWKS file, the remote JWKS) and the warnings about them; at least
// one is required.
func loadJWTKeys(c *JWT, resolve func(field, v string) (string, error)) (*jwtValidator, []string, error) {
	var warns []string
	v := &jwtValidator{secretKID: c.SecretKID}
	if c.Secret != "" {
		s, err := resolve("jwt secret", c.Secret)
		if err != nil {
			return nil, nil, err
		}
		if len(s) < jws.MinHMACSecret {
			return nil, nil, fmt.Errorf("jwt secret: must be at least %d bytes", jws.MinHMACSecret)
		}
		v.secret = []byte(s)
	}
	if c.JWKSFile != "" {
		path, err := resolve("jwt jwks_file", c.JWKSFile)
		if err != nil {
			return nil, nil, err
		}
		ks, err := readJWKSFile(path)
		if err != nil {
			return nil, nil, err
		}
		v.keys = ks
	}
	if c.JWKSURL != "" {
		if _, err := jws.Origin(c.JWKSURL); err != nil {
			return nil, nil, errors.New("jwt jwks_url: must be an absolute http(s) URL")
		}
		if strings.HasPrefix(c.JWKSURL, "http://") {
			warns = append(warns, "jwt jwks_url uses plain http; use https outside tests")
		}
		v.remote = jws.NewRemoteJWKS(c.JWKSURL, jws.FetchOptions{Timeout: 10 * time.Second})
	}
	if c.OIDCIssuer != "" {
		d, dwarns, err := discoverOIDC(context.Background(), c)
		if err != nil {
			return nil, nil, err
		}
		v.remote, v.issuer = d.keys, d.issuer
		warns = append(warns, dwarns...)
	} else if err := c.ValidateOIDC(); err != nil {
		return nil, nil, err
	}
	if v.secret == nil && v.keys == nil && v.remote == nil {
		return nil, nil, errors.New("jwt: set secret, jwks_file, jwks_url or oidc_issuer")
	}
	return v, warns, nil
}

// jwtAlgorithms returns the accepted algorithms: configured, checked to
// be supported, or by default HS256 with a secret and RS256, ES256 and
// EdDSA with a JWKS.
func jwtAlgorithms(configured []string, hasSecret, hasJWKS bool) ([]string, error) {
	algs := configured
	if len(algs) == 0 {
		if hasSecret {
			algs = append(algs, jws.AlgHS256)
		}
		if hasJWKS {
			algs = append(algs, jws.AlgRS256, jws.AlgES256, jws.AlgEdDSA)
		}
	}
	for _, a := range algs {
		switch a {
		case jws.AlgHS256, jws.AlgRS256, jws.AlgES256, jws.AlgEdDSA:
		default:
			return nil, fmt.Errorf("jwt algorithms: %q is not supported (HS256, RS256, ES256, EdDSA)", a)
		}
	}
	return algs, nil
}

// jwtParserOptions returns the parser options for algs and skew, with the
// issuer and audience c requires, and a warning for each one it does not.
func jwtParserOptions(c *JWT, algs []string, skew time.Duration) ([]jwt.ParserOption, []string) {
	var warns []string
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(algs),
		jwt.WithLeeway(skew),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
	}
	if c.Issuer != "" {
		opts = append(opts, jwt.WithIssuer(c.Issuer))
	} else {
		warns = append(warns, "jwt: no issuer configured; tokens from any issuer the keys sign are accepted")
	}
	if c.Audience != "" {
		opts = append(opts, jwt.WithAudience(c.Audience))
	} else {
		warns = append(warns, "jwt: no audience configured; tokens meant for other services are accepted")
	}
	return opts, warns
}

// readJWKSFile reads and parses the JWKS file at path (at most
// jws.MaxJWKSBytes).
func readJWKSFile(path string) (*jws.KeySet, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New("jwt jwks_file: cannot open the file")
	}
	defer f.Close()
	b, err := limitio.ReadAll(f, jws.MaxJWKSBytes)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("jwt jwks_file: jwks: %w", err) // ParseJWKS's words
	}
	if err != nil {
		return nil, errors.New("jwt jwks_file: cannot read the file")
	}
	ks, err := jws.ParseJWKS(b)
	if err != nil {
		return nil, fmt.Errorf("jwt jwks_file: %w", err)
	}
	return ks, nil
}

// looksLikeJWT reports whether tok has the three-part compact form.
func looksLikeJWT(tok string) bool {
	return strings.Count(tok, ".") == 2 && len(tok) <= maxJWTBytes
}

// validate checks tok and returns its principal (the principal_claim,
// default sub), the end of its validity (exp plus the clock skew), its
// scopes and its claims (AUTH-8).
func (v *jwtValidator) validate(ctx context.Context, tok string) (Result, bool) {
	if !looksLikeJWT(tok) {
		return Result{}, false
	}
	claims := jwt.MapClaims{}
	t, err := v.parser.ParseWithClaims(tok, claims, func(t *jwt.Token) (any, error) {
		return v.keyFor(ctx, t)
	})
	if err != nil || !t.Valid {
		return Result{}, false
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return Result{}, false
	}
	principal, _ := claims[v.principalClaimName()].(string)
	if !validName(principal) {
		return Result{}, false
	}
	return Result{Principal: principal, Expires: exp.Add(v.skew), Scopes: tokenScopes(claims), Claims: tokenClaims(claims)}, true
}

func (v *jwtValidator) keyFor(ctx context.Context, t *jwt.Token) (any, error) {
	alg := t.Method.Alg()
	kid, _ := t.Header["kid"].(string)
	if alg == jws.AlgHS256 && v.secret != nil && (v.secretKID == "" || kid == v.secretKID) {
		if keys := v.lookup(ctx, kid, alg); len(keys) > 0 {
			return jwt.VerificationKeySet{Keys: append(keys, v.secret)}, nil
		}
		return v.secret, nil
	}
	keys := v.lookup(ctx, kid, alg)
	if len(keys) == 0 {
		return nil, errors.New("no key for the token")
	}
	return jwt.VerificationKeySet{Keys: keys}, nil
}

// lookup returns the JWKS keys fitting alg: by kid, or every fitting key
// when the token has no kid.
func (v *jwtValidator) lookup(ctx context.Context, kid, alg string) []jwt.VerificationKey {
	var cands []jws.Key
	if kid != "" {
		cands = append(cands, v.keys.Lookup(kid)...)
		if v.remote != nil {
			ks, _ := v.remote.Lookup(ctx, kid)
			cands = append(cands, ks...)
		}
	} else {
		cands = v.keys.All()
		if v.remote != nil && alg != jws.AlgHS256 { // public keys without kid (AUTH-7)
			ks, _ := v.remote.Lookup(ctx, "")
			cands = append(cands, ks...)
		}
	}
	var out []jwt.VerificationKey
	for _, k := range cands {
		if !k.Fits(alg) || !slices.Contains(v.algs, alg) {
			continue
		}
		if k.Secret != nil {
			out = append(out, k.Secret)
		} else {
			out = append(out, k.Public)
		}
	}
	return out
}
