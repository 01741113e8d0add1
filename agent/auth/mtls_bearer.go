package auth

import (
	"errors"
	"net/http"
	"strings"
)

// checkBearerPair validates a configuration with mtls require_with_bearer
// (AUTH-9): it needs a bearer credential to pair the certificate with, and
// admits no Basic or API key credential (they would never be accepted).
func (a *Authenticator) checkBearerPair() error {
	if len(a.tokens) == 0 && a.jwt == nil {
		return errors.New("mtls require_with_bearer: configure a bearer token or jwt to pair the client certificate with")
	}
	if len(a.users) > 0 || len(a.keys) > 0 {
		return errors.New("mtls require_with_bearer: Basic and API key credentials cannot be combined with it (only bearer tokens and JWTs)")
	}
	return nil
}

// checkMTLSAndBearer is Check under mtls require_with_bearer (AUTH-9's
// AND requirement): the request must carry a valid bearer credential (a
// static token or a JWT) AND arrive over a connection whose verified
// client certificate the mtls rules accept. The principal, scopes and
// claims are the bearer's; the certificate's mapped name is not used as
// the principal (it authenticates the calling workload, not the caller),
// so the two never need to name the same principal. The result expires at
// the earlier of the token's and the certificate's expiry (AUTH-10).
func (a *Authenticator) checkMTLSAndBearer(r *http.Request) (Result, bool) {
	scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return Result{}, false
	}
	res, ok := a.check(r)
	if !ok {
		return Result{}, false
	}
	_, certExp, ok := a.mtls.principal(r.TLS, nil)
	if !ok {
		return Result{}, false
	}
	if res.Expires.IsZero() || certExp.Before(res.Expires) {
		res.Expires = certExp
	}
	return res, true
}
