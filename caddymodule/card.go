package caddymodule

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

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
//
// What the card says about the agent (push, thinking exposure, resumable
// streams, idempotent sends, bindings, the WebSocket path, the 0.3 dual
// card, the push signing keys it publishes, the auth schemes) is derived
// from the a2a handler it fronts: the first a2a handler after it in its
// route (or a later route of the same list), with the same path_prefix,
// and the a2a_auth handler in front of that one. Nothing needs copying; the
// fields below that say "Normally derived" override the derived value when
// set. A card without an a2a handler says only what it sets. As the `card`
// of an a2a handler (its extended card), the facts are that handler's,
// except security, which that handler cannot see: the a2a directive sets
// it there from its auth block.
type CardHandler struct {
	card.Config

	// MaxAge is the Cache-Control max-age of card responses. Default: 60s.
	MaxAge *caddy.Duration `json:"max_age,omitempty"`

	// Security declares which auth schemes guard the agent, for the card's
	// securitySchemes and securityRequirements. Normally derived from the
	// a2a_auth handler in front of the a2a handler (see the type's doc);
	// when set, it overrides that. Never holds a credential.
	Security *card.Security `json:"security,omitempty"`

	// PushNotifications sets capabilities.pushNotifications. Normally
	// derived: true when the a2a handler has push on. Setting it true
	// overrides that; false is unset.
	PushNotifications bool `json:"push_notifications,omitempty"`

	// ThinkingTypes are the enabled thinking-exposure types (e.g.
	// tool_trace, raw_thinking); when non-empty the thinking-exposure
	// extension is advertised with params.enabledTypes. Normally derived
	// from the a2a handler's thinking_exposure; when set (an empty list
	// too: none), it overrides that.
	ThinkingTypes []string `json:"thinking_types,omitempty"`

	// LegacyV03 serves the dual card A2A 0.3 clients read too (RPC-2).
	// Normally derived from the a2a handler's legacy_v03. Setting it true
	// overrides that; false is unset.
	LegacyV03 bool `json:"legacy_v03,omitempty"`
	// EventLogSize, when positive, advertises resumable streams
	// (urn:caddy-a2a:stream-resume:v1, RPC-17) with params.eventLogSize.
	// Normally derived from the a2a handler's event_log_size (default
	// 1000); when set, it overrides that.
	EventLogSize int `json:"event_log_size,omitempty"`
	// DedupeWindow, when positive, advertises idempotent sends
	// (urn:caddy-a2a:idempotent-send:v1, RPC-18) with
	// params.windowSeconds. Normally derived from the a2a handler's
	// dedupe_window (default 10m; off: not advertised); when set, it
	// overrides that.
	DedupeWindow caddy.Duration `json:"dedupe_window,omitempty"`
	// DedupeAlways sets params.always of the idempotent-send extension:
	// every send is deduplicated. Normally derived from the a2a handler's
	// dedupe ("always"). Setting it true overrides that; false is unset.
	DedupeAlways bool `json:"dedupe_always,omitempty"`

	// Sign lists the keys the served card is signed with (CARD-6), one
	// JWS signature per key, so keys can be rotated. The card is signed
	// after every runtime field is filled in, per base URL. Secrets and
	// key file paths may be placeholders, resolved at provision time.
	Sign []jws.SignKey `json:"sign,omitempty"`

	// JWKSPath, when set (e.g. /.well-known/jwks.json), serves the public
	// keys of Sign (never HS256 secrets) as a JWKS at this path, for `jku`.
	JWKSPath string `json:"jwks_path,omitempty"`
	// PushSign are the push notification signing keys (PUSH-8) whose
	// public keys the JWKS publishes: at jwks_path, else at
	// /.well-known/jwks.json. Normally derived from the a2a handler's
	// push.sign; when set, it overrides that.
	PushSign []jws.SignKey `json:"push_sign,omitempty"`

	// WebSocketPath, when set, advertises the WebSocket binding
	// (protocolBinding websocket, XPORT-3) at ws[s]://<base>/<path>.
	// Normally derived from the a2a handler's websocket path; when set, it
	// overrides that.
	WebSocketPath string `json:"websocket_path,omitempty"`

	// RedisStreamsURL, when set, advertises the Redis Streams JSON-RPC
	// carrier (protocolBinding redis-streams, XPORT-5) at this URL.
	// Normally derived from the a2a handler's redis_rpc advertise_url;
	// when set, it overrides that. Default: not advertised.
	RedisStreamsURL string `json:"redis_streams_url,omitempty"`

	// Bindings are the protocol bindings advertised in
	// supportedInterfaces, in preference order. Normally derived from the
	// a2a handler (GRPC with its grpc option); when set, it overrides
	// that. Default: JSONRPC, HTTP+JSON.
	Bindings []string `json:"bindings,omitempty"`
	// GRPCPort, when set, advertises the GRPC interface at the base
	// URL's host with this port. Normally derived from the a2a handler's
	// grpc listen address; when set, it overrides that. Default: the
	// site's port.
	GRPCPort string `json:"grpc_port,omitempty"`
	// PathPrefix is the path the agent is served under on its site, e.g.
	// "/planner" for an `agent planner { … }` block (TURN-10): the handler
	// sees the path with the prefix stripped, and the card's URLs carry it.
	// The card declares, and the a2a handler holding this card serves, the
	// A2A tenant of the same name (the prefix without "/"). Default: none
	// (the site root).
	PathPrefix string `json:"path_prefix,omitempty"`

	handler *card.Handler                 // built at Provision (eager), else by lazy
	lazy    func() (*card.Handler, error) // builds the a2a_card handler at first use
	eager   bool                          // the card of an a2a handler (provisionFor)
	signers []*jws.Signer                 // the card's signing keys (Sign)
	publish []*jws.Signer                 // the loaded PushSign keys set on the card
	logger  *zap.Logger
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

// Provision loads the signing keys (resolving placeholders). The card
// handler is built at the first request, once the a2a handler of the route
// is provisioned too, with the facts derived from it (see card_facts.go);
// the card of an a2a handler is built at once (provisionFor).
func (h *CardHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	repl := caddy.NewReplacer()
	resolve := func(s string) string { return repl.ReplaceKnown(s, "") }
	for _, k := range h.Sign {
		if k.KeyFile != "" {
			denyStatePaths(resolve(k.KeyFile)) // INPUT-1a: never readable as input
		}
	}
	var err error
	if h.signers, err = jws.LoadSigners(h.Sign, resolve); err != nil {
		return err
	}
	if h.publish, err = loadPushSign(h.PushSign); err != nil {
		return err
	}
	if h.eager {
		h.handler, err = h.build(h.explicitFacts())
		return err
	}
	h.lazy = sync.OnceValues(func() (*card.Handler, error) {
		return h.build(h.explicitFacts().Or(h.derivedFacts(ctx)))
	})
	return nil
}

// loadPushSign loads the push signing keys whose public halves the JWKS
// publishes (PUSH-8), resolving placeholders.
func loadPushSign(keys []jws.SignKey) ([]*jws.Signer, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	repl := caddy.NewReplacer()
	return jws.LoadSignersFor("push sign", keys, func(s string) string { return repl.ReplaceKnown(s, "") })
}

// build builds the card handler of the card with facts f.
func (h *CardHandler) build(f card.Facts) (*card.Handler, error) {
	opts := h.options(f)
	opts.Signers, opts.Logger = h.signers, h.logger
	opts.PublishKeys = h.publish
	if h.publish == nil && len(f.PushSign) > 0 {
		var err error
		if opts.PublishKeys, err = loadPushSign(f.PushSign); err != nil { // the a2a handler's
			return nil, err
		}
	}
	return card.NewHandler(h.Config, opts)
}

// options maps the configuration and facts f to the card handler's
// options (without signers, published keys and logger).
func (h *CardHandler) options(f card.Facts) card.Options {
	return card.Options{
		MaxAge:            h.maxAge(),
		Security:          f.Security,
		PushNotifications: f.PushNotifications,
		ThinkingTypes:     f.ThinkingTypes,
		LegacyV03:         f.LegacyV03,
		UpstreamSkills:    skillsOf(h.Name), // TURN-9
		EventLogSize:      f.EventLogSize,
		DedupeWindow:      f.DedupeWindow,
		DedupeAlways:      f.DedupeAlways,
		JWKSPath:          h.JWKSPath,
		Bindings:          f.Bindings,
		GRPCPort:          f.GRPCPort,
		ModTimes:          cardModTimes(),
		TrustedProxy:      trustedProxy,
		Interfaces:        append(wsInterface(f.WebSocketPath), redisInterface(f.RedisStreamsURL)...),
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
	opts := h.options(h.explicitFacts())
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
	ch, err := h.current()
	if err != nil {
		return h.failed(w, r, next, err)
	}
	if !ch.Handles(r) {
		return next.ServeHTTP(w, r) // from a small frame: see AuthHandler.ServeHTTP
	}
	return serveCard(ch, w, r)
}

// current is the card handler, built on first use for an a2a_card handler.
func (h *CardHandler) current() (*card.Handler, error) {
	if h.handler != nil {
		return h.handler, nil
	}
	return h.lazy()
}

// failed answers the card paths 500 when the card could not be built (the
// published push signing keys failed to load) and passes anything else to
// next.
func (h *CardHandler) failed(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler, err error) error {
	if r.URL.Path != card.WellKnownPath && r.URL.Path != card.LegacyWellKnownPath {
		return next.ServeHTTP(w, r)
	}
	return caddyhttp.Error(http.StatusInternalServerError, err)
}

// serveCard answers an agent card request.
func serveCard(ch *card.Handler, w http.ResponseWriter, r *http.Request) error {
	var he *card.HTTPError
	if err := ch.Serve(w, r); errors.As(err, &he) {
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
