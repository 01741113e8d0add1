package auth

import (
	"context"
	"net/http"
)

// AuthenticateHeaders checks credentials carried outside an HTTP request
// (the headers object of a Redis Streams request, XPORT-5) with the same
// rules as Authenticate: headers holds header names (any case) and values,
// e.g. {"authorization": "Bearer …"} or the API key header. It returns
// false when auth is enabled and no credential matches, and also when auth
// is disabled (as Authenticate does).
func (a *Authenticator) AuthenticateHeaders(ctx context.Context, headers map[string]string) (string, bool) {
	res, ok := a.CheckHeaders(ctx, headers)
	return res.Principal, ok
}

// CheckHeaders is AuthenticateHeaders with the credential's expiry,
// scopes and claims (see Check; AUTH-8).
func (a *Authenticator) CheckHeaders(ctx context.Context, headers map[string]string) (Result, bool) {
	if a == nil {
		return Result{}, false
	}
	h := make(http.Header, len(headers))
	for k, v := range headers {
		h.Set(k, v)
	}
	r := (&http.Request{Header: h}).WithContext(ctx)
	return a.Check(r)
}
