package caddymodule

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

func init() {
	caddy.RegisterModule(CardHandler{})
}

// CardHandler serves the public A2A 1.0 Agent Card on
// /.well-known/agent-card.json and the legacy /.well-known/agent.json (GET
// and HEAD), with Content-Type application/a2a+json, Cache-Control, a strong
// ETag of the exact bytes served and a Last-Modified that only moves when the
// card content changes; conditional requests get 304 (see card.Handler).
// Other paths go to the next handler.
//
// The card is the configured fields (flattened into this object; see
// card.Config) plus runtime fields: supportedInterfaces (JSONRPC then
// HTTP+JSON at the base URL: public_url, else the request's scheme and Host,
// honouring X-Forwarded-Proto/Host only from trusted proxies; never a
// wildcard address), capabilities and security schemes.
type CardHandler struct {
	card.Config

	// MaxAge is the Cache-Control max-age of card responses. Default: 60s.
	MaxAge *caddy.Duration `json:"max_age,omitempty"`

	// Security declares which auth schemes guard the agent, for the card's
	// securitySchemes and securityRequirements. The a2a directive fills it
	// from its auth block; in JSON, keep it in step with the a2a_auth
	// handler. Never holds a credential.
	Security *card.Security `json:"security,omitempty"`

	// PushNotifications sets capabilities.pushNotifications. Default: false.
	PushNotifications bool `json:"push_notifications,omitempty"`

	// ThinkingTypes are the enabled thinking-exposure types (e.g.
	// tool_trace, raw_thinking); when non-empty the thinking-exposure
	// extension is advertised with params.enabledTypes.
	ThinkingTypes []string `json:"thinking_types,omitempty"`

	// LegacyV03 serves the dual card A2A 0.3 clients read too (RPC-2).
	// The a2a directive sets it with the agent's legacy_v03.
	LegacyV03 bool `json:"legacy_v03,omitempty"`
	// EventLogSize, when positive, advertises resumable streams
	// (urn:caddy-a2a:stream-resume:v1, RPC-17) with params.eventLogSize.
	// The a2a directive sets it from its event_log_size.
	EventLogSize int `json:"event_log_size,omitempty"`
	// DedupeWindow, when positive, advertises idempotent sends
	// (urn:caddy-a2a:idempotent-send:v1, RPC-18) with
	// params.windowSeconds. The a2a directive sets it from its
	// dedupe_window (default 10m; off: not advertised).
	DedupeWindow caddy.Duration `json:"dedupe_window,omitempty"`
	// DedupeAlways sets params.always of the idempotent-send extension:
	// every send is deduplicated. The a2a directive sets it with `dedupe
	// always`.
	DedupeAlways bool `json:"dedupe_always,omitempty"`

	// Sign lists the keys the served card is signed with (CARD-6), one
	// JWS signature per key, so keys can be rotated. The card is signed
	// after every runtime field is filled in, per base URL. Secrets and
	// key file paths may be placeholders, resolved at provision time.
	Sign []jws.SignKey `json:"sign,omitempty"`

	// JWKSPath, when set (e.g. /.well-known/jwks.json), serves the public
	// keys of Sign (never HS256 secrets) as a JWKS at this path, for `jku`.
	JWKSPath string `json:"jwks_path,omitempty"`
	// PushSign are the push notification signing keys of the site's a2a
	// handler (PUSH-8) whose public keys the JWKS publishes: at jwks_path,
	// else at /.well-known/jwks.json. The a2a directive copies them from
	// the push block; JSON configs set them to the handler's push.sign.
	PushSign []jws.SignKey `json:"push_sign,omitempty"`

	// WebSocketPath, when set, advertises the WebSocket binding
	// (protocolBinding websocket, XPORT-3) at ws[s]://<base>/<path>. The
	// a2a directive sets it from its websocket option.
	WebSocketPath string `json:"websocket_path,omitempty"`

	// Bindings are the protocol bindings advertised in
	// supportedInterfaces, in preference order. The a2a directive fills it
	// from the bindings its handler enables (GRPC with the grpc option);
	// in JSON, keep it in step with the a2a handler. Default: JSONRPC,
	// HTTP+JSON.
	Bindings []string `json:"bindings,omitempty"`
	// PathPrefix is the path the agent is served under on its site, e.g.
	// "/planner" for an `agent planner { … }` block (TURN-10): the handler
	// sees the path with the prefix stripped, and the card's URLs carry it.
	// The card declares, and the a2a handler holding this card serves, the
	// A2A tenant of the same name (the prefix without "/"). Default: none
	// (the site root).
	PathPrefix string `json:"path_prefix,omitempty"`

	handler *card.Handler
}

// cardModTimes remembers, process-wide and across reloads, when each card
// rendering (by content hash) was first served, persisted under Caddy's
// data directory so restarts keep Last-Modified too. Keys are content
// hashes, so sites and config generations cannot disturb each other. The
// directory is found on first use, after Caddy read its environment file.
var cardModTimes = sync.OnceValue(func() *card.ModTimes {
	return card.NewFileModTimes(1024, filepath.Join(caddy.AppDataDir(), "a2a", "card_modtimes.json"))
})

// CaddyModule returns the Caddy module information.
func (CardHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_card",
		New: func() caddy.Module { return new(CardHandler) },
	}
}

// Provision loads the signing keys (resolving placeholders) and builds the
// card handler.
func (h *CardHandler) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	resolve := func(s string) string { return repl.ReplaceKnown(s, "") }
	for _, k := range h.Sign {
		if k.KeyFile != "" {
			denyStatePaths(resolve(k.KeyFile)) // INPUT-1a: never readable as input
		}
	}
	signers, err := jws.LoadSigners(h.Sign, resolve)
	if err != nil {
		return err
	}
	opts := h.options()
	opts.Signers, opts.Logger = signers, ctx.Logger()
	if len(h.PushSign) > 0 {
		// PUSH-8: the push signing keys' public halves are published too.
		if opts.PublishKeys, err = jws.LoadSignersFor("push sign", h.PushSign, resolve); err != nil {
			return err
		}
	}
	h.handler, err = card.NewHandler(h.Config, opts)
	return err
}

// options maps the configuration to the card handler's options (without
// signers and logger).
func (h *CardHandler) options() card.Options {
	return card.Options{
		MaxAge:            h.maxAge(),
		Security:          h.Security,
		PushNotifications: h.PushNotifications,
		ThinkingTypes:     h.ThinkingTypes,
		LegacyV03:         h.LegacyV03,
		UpstreamSkills:    skillsOf(h.Name), // TURN-9
		EventLogSize:      h.EventLogSize,
		DedupeWindow:      time.Duration(h.DedupeWindow),
		DedupeAlways:      h.DedupeAlways,
		JWKSPath:          h.JWKSPath,
		Bindings:          h.Bindings,
		ModTimes:          cardModTimes(),
		TrustedProxy:      trustedProxy,
		Interfaces:        wsInterface(h.WebSocketPath),
		PathPrefix:        h.PathPrefix,
		Tenant:            strings.TrimPrefix(h.PathPrefix, "/"), // TURN-10
	}
}

// Validate checks the card configuration.
func (h *CardHandler) Validate() error {
	if err := h.Config.Validate(); err != nil {
		return err
	}
	if err := jws.CheckSignKeys("card sign", h.Sign); err != nil {
		return err
	}
	opts := h.options()
	return opts.Validate()
}

// trustedProxy reports whether Caddy found r to come from a trusted proxy.
func trustedProxy(r *http.Request) bool {
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	return trusted
}

// ServeHTTP serves the card and JWKS paths and passes anything else to
// next.
func (h *CardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if !h.handler.Handles(r) {
		return next.ServeHTTP(w, r) // from a small frame: see AuthHandler.ServeHTTP
	}
	return h.serve(w, r)
}

// serve answers an agent card request.
func (h *CardHandler) serve(w http.ResponseWriter, r *http.Request) error {
	var he *card.HTTPError
	if err := h.handler.Serve(w, r); errors.As(err, &he) {
		return caddyhttp.Error(he.Code, he.Err)
	} else if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	return nil
}

var (
	_ caddy.Provisioner           = (*CardHandler)(nil)
	_ caddy.Validator             = (*CardHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*CardHandler)(nil)
)
