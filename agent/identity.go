package agent

import (
	"context"
	"slices"
)

// Identity is what the caller's credential says beyond its principal name
// (AUTH-8): the OAuth 2.0 scopes it grants and the values of its claims.
// Only a bearer JWT has one; static tokens, Basic credentials and API keys
// carry no scopes and no claims. A nil *Identity has neither.
type Identity struct {
	// Scopes are the scope tokens the credential grants (a JWT's `scope`
	// string split at spaces, and its `scp` array or string), each compared
	// whole and case-sensitively.
	Scopes []string
	// Claims are the credential's top-level claims whose values are
	// strings, booleans, numbers or arrays of them, by claim name; each
	// value as text ("true", "42"), an array as its elements.
	Claims map[string][]string
}

// HasScope reports whether the credential grants scope s (an exact,
// case-sensitive compare of whole tokens: "a2a.read" is not granted by
// "a2a.read,a2a.write" nor by "a2a.read.all").
func (id *Identity) HasScope(s string) bool {
	return id != nil && s != "" && slices.Contains(id.Scopes, s)
}

// HasClaim reports whether the credential's claim name has value (the
// whole string, or one element of an array claim, compared exactly).
func (id *Identity) HasClaim(name, value string) bool {
	return id != nil && slices.Contains(id.Claims[name], value)
}

// MissingScopes returns the scopes of required the credential does not
// grant, in the order of required (nil when it grants all).
func (id *Identity) MissingScopes(required []string) []string {
	var out []string
	for _, s := range required {
		if !id.HasScope(s) {
			out = append(out, s)
		}
	}
	return out
}

type identityKey struct{}

// WithIdentity returns ctx carrying id, the identity of the request's
// credential, for a binding to put into the Call it builds (see
// IdentityFrom; the HTTP bindings read it in httpx NewCall).
func WithIdentity(ctx context.Context, id *Identity) context.Context {
	if id == nil {
		return ctx
	}
	return context.WithValue(ctx, identityKey{}, id)
}

// IdentityFrom returns the Identity attached by WithIdentity, or nil.
func IdentityFrom(ctx context.Context) *Identity {
	id, _ := ctx.Value(identityKey{}).(*Identity)
	return id
}
