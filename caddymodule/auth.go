package caddymodule

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/binding"
)

func init() {
	caddy.RegisterModule(AuthHandler{})
}

// PrincipalVar is the request variable (caddyhttp.GetVar) holding the
// authenticated principal's name; the agent handler reads it.
const PrincipalVar = "a2a.principal"

// AuthHandler guards the handlers after it with bearer tokens, HTTP Basic
// and API keys (see auth.Config, flattened into this object), each mapped
// to a named principal. Unset credentials default to the IACCODE_A2A_*
// environment variables unless no_env is set. Secrets may be {env.X} or
// {file.path} placeholders, resolved at provision time.
//
// A request without valid credentials gets one WWW-Authenticate header
// per enabled scheme and the unauthenticated answer of its binding, each
// with the ErrorInfo reason UNAUTHENTICATED (binding.WriteUnauthenticated):
// a JSON-RPC request (POST /) gets 401 with a JSON-RPC error (code
// -31401, id null); other requests (HTTP+JSON, WebSocket upgrades) get 401
// with the AIP-193 body {"error":{"code":401,"status":"UNAUTHENTICATED",…}};
// a gRPC request (HTTP/2, Content-Type application/grpc), whose
// credentials are its authorization or API-key metadata, gets the gRPC
// status UNAUTHENTICATED (16) as a trailers-only response when GRPC is
// set, else the HTTP answer. On success it sets the placeholder
// {http.auth.user.id} and the request variable a2a.principal to the
// principal name. Either way it then
// removes the API key header from the request, so access logs never show
// the key. With no credential
// configured at all, every request passes through without a principal.
type AuthHandler struct {
	auth.Config

	// GRPC says the a2a handler after this one serves gRPC (its grpc
	// option; the a2a directive sets it): only then are gRPC requests
	// refused with a gRPC status. Default: false.
	GRPC bool `json:"grpc,omitempty"`

	authn  *auth.Authenticator
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (AuthHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_auth",
		New: func() caddy.Module { return new(AuthHandler) },
	}
}

// Validate checks the values that need no key loaded (the JWT
// clock_skew); the Caddyfile parser runs the same check.
func (h *AuthHandler) Validate() error {
	if h.Config.JWT != nil {
		if err := h.Config.JWT.ValidateOIDC(); err != nil {
			return err
		}
		return h.Config.JWT.ValidateClockSkew()
	}
	return nil
}

// Provision applies environment defaults, resolves placeholders and checks
// the credentials.
func (h *AuthHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	repl := caddy.NewReplacer()
	if h.Config.JWT != nil && h.Config.JWT.JWKSFile != "" {
		denyStatePaths(repl.ReplaceKnown(h.Config.JWT.JWKSFile, "")) // INPUT-1a
	}
	logEnvAuth(h.logger, h.Config.EnvUsed(os.Getenv))
	authn, warns, err := auth.New(h.Config, auth.Options{
		Getenv:  os.Getenv,
		Replace: func(s string) string { return repl.ReplaceKnown(s, "") },
	})
	for _, w := range warns {
		h.logger.Warn(w)
	}
	if err != nil {
		return fmt.Errorf("a2a auth: %w", err)
	}
	h.authn = authn
	if authn.Enabled() {
		s := authn.Schemes()
		h.logger.Info("a2a auth enabled",
			zap.Bool("bearer", s.Bearer), zap.Bool("basic", s.Basic), zap.Bool("api_key", s.APIKey),
			zap.Int("principals", len(authn.Principals())))
	}
	return nil
}

// envAuthLogged holds the sets of environment variables already logged:
// one line per process (not per site, nor per reload) for each.
var envAuthLogged sync.Map

// logEnvAuth says, once, which IACCODE_A2A_* variables enable auth and
// how to turn them off (names only, never values).
func logEnvAuth(logger *zap.Logger, used []string) {
	if len(used) == 0 {
		return
	}
	if _, seen := envAuthLogged.LoadOrStore(strings.Join(used, "|"), true); seen {
		return
	}
	logger.Info("auth credentials from the environment: these variables enable auth on every a2a site of this process; set no_env in an auth block to ignore them there",
		zap.Strings("variables", used))
}

// Authenticator returns the provisioned authenticator (nil before
// Provision).
func (h *AuthHandler) Authenticator() *auth.Authenticator { return h.authn }

// CredentialExpiresVar is the request variable (caddyhttp.GetVar) holding
// the time.Time at which the request's credential stops being valid (a
// JWT's exp plus the clock skew); unset for credentials without an
// expiry. The WebSocket binding ends the connection's access then
// (AUTH-10).
const CredentialExpiresVar = "a2a.credential_expires"

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *AuthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.authn.Enabled() {
		var ok bool
		var cancel context.CancelFunc
		if r, cancel, ok = h.authenticate(w, r); !ok {
			return nil
		}
		defer cancel()
	}
	// The next handlers (a stream among them) run from this small frame:
	// authenticate has returned, so an idle stream keeps a smaller stack.
	return next.ServeHTTP(w, r)
}

// authenticate checks the request's credentials and records its principal;
// false when it answered the request itself (401). A credential with an
// expiry bounds the request (AUTH-10): its context ends then, so an SSE
// or gRPC stream opened with a JWT ends when the token expires; the
// WebSocket binding reads the expiry from CredentialExpiresVar instead
// (its connection outlives the upgrade request).
func (h *AuthHandler) authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, context.CancelFunc, bool) {
	res, ok := h.authn.Check(r)
	principal := res.Principal
	// The API key has done its job: drop it so that Caddy's access log
	// (which reads this header map when the request ends, and redacts only
	// Authorization and Cookie) and later handlers never see it (OPS-1).
	r.Header.Del(h.authn.APIKeyHeader())
	if !ok {
		if c := h.logger.Check(zap.DebugLevel, "a2a auth: unauthorized request"); c != nil {
			c.Write(zap.String("remote_ip", r.RemoteAddr), zap.String("uri", r.RequestURI))
		}
		binding.WriteUnauthenticated(w, r, h.authn.Challenges(), h.GRPC)
		return r, nil, false
	}
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		repl.Set("http.auth.user.id", principal)
	}
	caddyhttp.SetVar(r.Context(), PrincipalVar, principal)
	r = withIdentity(r, res) // AUTH-8: scopes and claims for the bindings
	if res.Expires.IsZero() {
		return r, func() {}, true
	}
	caddyhttp.SetVar(r.Context(), CredentialExpiresVar, res.Expires)
	if isWebSocketUpgrade(r) {
		return r, func() {}, true // the binding enforces it on the connection
	}
	ctx, cancel := context.WithDeadline(r.Context(), res.Expires)
	return r.WithContext(ctx), cancel, true
}

// isWebSocketUpgrade reports whether r asks for a WebSocket upgrade.
func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

var (
	_ caddy.Provisioner           = (*AuthHandler)(nil)
	_ caddy.Validator             = (*AuthHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*AuthHandler)(nil)
)
