package auth

import (
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// DefaultPrincipalClaim is the claim that names the principal of a JWT
// when JWT.PrincipalClaim is not set.
const DefaultPrincipalClaim = "sub"

// checkPrincipalClaim reports a principal_claim that cannot name a claim.
func checkPrincipalClaim(name string) error {
	if name == "" {
		return nil
	}
	if len(name) > 128 || strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return errors.New("jwt principal_claim: must be a claim name without spaces (e.g. sub, azp, client_id)")
	}
	return nil
}

// principalClaim returns the claim that names the principal.
func (v *jwtValidator) principalClaimName() string {
	if v.principalClaim != "" {
		return v.principalClaim
	}
	return DefaultPrincipalClaim
}

// tokenScopes returns the scopes a token grants (AUTH-8): its `scope`
// claim (RFC 8693 §4.2, RFC 9068: one string of space-separated tokens)
// and its `scp` claim (an array of tokens, or such a string, as some
// identity providers write it), without repeats. Only a space separates
// tokens; a token that is not an RFC 6749 scope token (a tab, a comma
// inside is kept as part of it, a control character or quote drops it)
// is never split further, so "a,b" grants neither a nor b.
func tokenScopes(claims jwt.MapClaims) []string {
	var out []string
	add := func(tok string) {
		if a2a.ValidScope(tok) && !slices.Contains(out, tok) {
			out = append(out, tok)
		}
	}
	addString := func(s string) {
		for _, tok := range strings.Split(s, " ") {
			add(tok)
		}
	}
	if s, ok := claims["scope"].(string); ok {
		addString(s)
	}
	switch v := claims["scp"].(type) {
	case string:
		addString(v)
	case []any:
		for _, e := range v {
			if s, ok := e.(string); ok {
				add(s) // an element is one token: "a b" is no scope
			}
		}
	}
	return out
}

// tokenClaims returns the token's top-level claims that limits may
// select on (`claim:NAME=VALUE`, AUTH-8), as text: a string as is, a
// boolean as "true"/"false", a number in its shortest decimal form, an
// array as its elements of those kinds. Objects and nulls are left out.
func tokenClaims(claims jwt.MapClaims) map[string][]string {
	out := make(map[string][]string, len(claims))
	for name, v := range claims {
		if arr, ok := v.([]any); ok {
			var vals []string
			for _, e := range arr {
				if s, ok := claimText(e); ok {
					vals = append(vals, s)
				}
			}
			if len(vals) > 0 {
				out[name] = vals
			}
			continue
		}
		if s, ok := claimText(v); ok {
			out[name] = []string{s}
		}
	}
	return out
}

// claimText returns a scalar claim value as text.
func claimText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}
