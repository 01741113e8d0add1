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
}

// Check is Authenticate with the credential's expiry (AUTH-10): a
// long-lived carrier (a WebSocket connection, a stream) that was opened
// with the credential must end its access at Result.Expires.
func (a *Authenticator) Check(r *http.Request) (Result, bool) {
	p, exp, ok := a.check(r)
	if !ok {
		if p, exp, ok = a.checkMTLS(r); !ok { // AUTH-9
			return Result{}, false
		}
	}
	return Result{Principal: p, Expires: exp}, true
}

// check is Check's body: the principal and, for a JWT, its expiry.
func (a *Authenticator) check(r *http.Request) (string, time.Time, bool) {
	var none time.Time
	if !a.Enabled() {
		return "", none, false
	}
	if a.schemes.APIKey {
		if v := r.Header.Get(a.header); v != "" {
			if p, ok := matchDigest(a.keys, sha256.Sum256([]byte(v))); ok {
				return p, none, true
			}
		}
	}
	authz := r.Header.Get("Authorization")
	scheme, cred, _ := strings.Cut(strings.TrimSpace(authz), " ")
	cred = strings.TrimSpace(cred)
	if cred == "" {
		return "", none, false
	}
	switch {
	case strings.EqualFold(scheme, "Bearer") && a.schemes.Bearer:
		if p, ok := matchDigest(a.tokens, sha256.Sum256([]byte(cred))); ok {
			return p, none, true
		}
		if a.jwt != nil {
			p, exp, ok := a.jwt.validate(r.Context(), cred)
			if !ok || slices.Contains(a.principals, p) {
				// A token must not take over a configured principal's tasks
				// by naming it in `sub` (AUTH-3, AUTH-4).
				return "", none, false
			}
			return p, exp, true
		}
		return "", none, false
	case strings.EqualFold(scheme, "Basic") && a.schemes.Basic:
		raw, err := base64.StdEncoding.DecodeString(cred)
		if err != nil {
			return "", none, false
		}
		user, pass, found := strings.Cut(string(raw), ":")
		if !found {
			return "", none, false
		}
		p, ok := a.checkBasic(user, pass)
		return p, none, ok
	}
	return "", none, false
}
