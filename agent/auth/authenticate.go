package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"time"
)

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
	res, ok := a.Check(r)
	return res.Principal, ok
}

// Result is the outcome of a successful authentication.
type Result struct {
	// Principal is the authenticated principal's name.
	Principal string
	// Expires is when the credential stops being valid: a JWT's exp plus
	// the configured clock skew (the last instant the token is accepted).
	// Zero for credentials without an expiry (static tokens, Basic, API
	// keys), which stay valid as long as the configuration holds them.
	Expires time.Time
	// Scopes are the OAuth 2.0 scopes a JWT grants (its `scope` string
	// split at spaces and its `scp` claim, AUTH-8); nil for credentials
	// without scopes (static tokens, Basic, API keys).
	Scopes []string
	// Claims are a JWT's top-level scalar and array claims as text, by
	// name (see ClaimValues); nil for other credentials.
	Claims map[string][]string
}

// ClaimValues returns the values of the credential's claim name: one for
// a string, boolean or number claim, the elements of an array claim; nil
// when the credential has no such claim (or no claims at all).
func (r Result) ClaimValues(name string) []string { return r.Claims[name] }

// Check is Authenticate with the credential's expiry (AUTH-10), scopes
// and claims (AUTH-8): a long-lived carrier (a WebSocket connection, a
// stream) that was opened with the credential must end its access at
// Result.Expires.
func (a *Authenticator) Check(r *http.Request) (Result, bool) {
	if a.mtls != nil && a.mtls.withBearer {
		return a.checkMTLSAndBearer(r) // AUTH-9: certificate AND bearer
	}
	if res, ok := a.check(r); ok {
		return res, true
	}
	p, exp, ok := a.checkMTLS(r) // AUTH-9
	if !ok {
		return Result{}, false
	}
	return Result{Principal: p, Expires: exp}, true
}

// check is Check's body: the principal and, for a JWT, its expiry,
// scopes and claims.
func (a *Authenticator) check(r *http.Request) (Result, bool) {
	if !a.Enabled() {
		return Result{}, false
	}
	if a.schemes.APIKey {
		if v := r.Header.Get(a.header); v != "" {
			if p, ok := matchDigest(a.keys, sha256.Sum256([]byte(v))); ok {
				return Result{Principal: p}, true
			}
		}
	}
	authz := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(strings.TrimSpace(authz), " ")
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return Result{}, false
	}
	switch {
	case strings.EqualFold(scheme, "Bearer") && a.schemes.Bearer:
		if p, ok := matchDigest(a.tokens, sha256.Sum256([]byte(cred))); ok {
			return Result{Principal: p}, true
		}
		if a.jwt != nil {
			res, ok := a.jwt.validate(r.Context(), cred)
			if !ok || slices.Contains(a.principals, res.Principal) {
				// A token must not take over a configured principal's tasks
				// by naming it in its principal claim (AUTH-3, AUTH-4).
				return Result{}, false
			}
			return res, true
		}
		return Result{}, false
	case strings.EqualFold(scheme, "Basic") && a.schemes.Basic:
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return Result{}, false
		}
		user, pass, found := strings.Cut(string(raw), ":")
		if !found {
			return Result{}, false
		}
		p, ok := a.checkBasic(user, pass)
		if !ok {
			return Result{}, false
		}
		return Result{Principal: p}, true
	}
	return Result{}, false
}
