package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
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
