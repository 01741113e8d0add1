package card

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// LegacyWellKnownPath is the pre-1.0 card path, served as well.
const LegacyWellKnownPath = "/.well-known/agent.json"

// DefaultMaxAge is the usual Cache-Control max-age of card responses.
const DefaultMaxAge = 60 * time.Second

// maxCachedHosts bounds the per-host rendering cache.
const maxCachedHosts = 64

// contentType is the (shared, read-only) Content-Type header value.
var contentType = []string{"application/a2a+json"}

// Options are how a Handler serves its card, besides the card's Config.
type Options struct {
	// MaxAge is the Cache-Control max-age of card and JWKS responses, in
	// whole seconds; it must not be negative. Callers apply their default
	// (DefaultMaxAge).
	MaxAge time.Duration
	// Security declares the auth schemes on the card's securitySchemes and
	// securityRequirements. Nil: none.
	Security *Security
	// PushNotifications sets capabilities.pushNotifications (PUSH-1).
	PushNotifications bool
	// ThinkingTypes are the enabled thinking-exposure types; non-empty
	// advertises the thinking-exposure extension.
	ThinkingTypes []string
	// Interfaces are interfaces at paths of their own (the WebSocket
	// binding, XPORT-3), advertised after the default bindings.
	Interfaces []Interface
	// Bindings are the protocol bindings advertised in
	// supportedInterfaces, in preference order. Nil: JSONRPC, HTTP+JSON.
	Bindings []string
	// GRPCPort is Runtime.GRPCPort.
	GRPCPort string
	// LegacyV03 serves the dual 1.0/0.3 card (RPC-2, legacy_v03).
	LegacyV03 bool
	// UpstreamSkills, when set, returns skills to merge into the card
	// (TURN-9) and a version that changes whenever they do.
	UpstreamSkills func() ([]a2a.AgentSkill, uint64)
	// EventLogSize, when positive, advertises resumable streams
	// (StreamResumeExtension, RPC-17) with this per-task log size.
	EventLogSize int
	// DedupeWindow, when positive, advertises idempotent sends
	// (IdempotentSendExtension, RPC-18) with this window.
	DedupeWindow time.Duration
	// DedupeAlways marks idempotent sends as forced for every send
	// (`dedupe always`, params.always).
	DedupeAlways bool
	// Signers sign the served card after every runtime field is filled in,
	// one JWS signature each (CARD-6).
	Signers []*jws.Signer
	// JWKSPath, when set, serves the public keys of Signers and
	// PublishKeys (never HS256 secrets) as a JWKS at this path, which must
	// start with "/".
	JWKSPath string
	// PublishKeys are more keys whose public halves the JWKS serves, e.g.
	// the push notification signing keys (PUSH-8). When set without
	// JWKSPath, the JWKS is served at DefaultJWKSPath.
	PublishKeys []*jws.Signer
	// ModTimes records the Last-Modified of each card content. Nil: a new
	// in-memory one.
	ModTimes *ModTimes
	// TrustedProxy reports whether r came from a trusted proxy, whose
	// X-Forwarded-Proto and X-Forwarded-Host then set the base URL. Nil:
	// never.
	TrustedProxy func(r *http.Request) bool
	// Logger receives the warning of a card changed without a version
	// bump. Nil: no logging.
	Logger *zap.Logger
	// PathPrefix, when set (e.g. "/planner"), is appended to the base URL:
	// the agent is served under that path of its site (TURN-10), so every
	// supportedInterfaces URL and artifact link carries it. Default: none.
	PathPrefix string
	// Tenant, when set, is declared as the `tenant` of every
	// supportedInterfaces entry (TURN-10: the agent's name, which clients
	// then send on every request). Default: none.
	Tenant string
}

// DefaultJWKSPath is where the JWKS is served when keys must be published
// (PublishKeys) and no JWKSPath is set.
const DefaultJWKSPath = "/.well-known/jwks.json"

// Validate checks the options that need no key or file.
func (o *Options) Validate() error {
	if o.MaxAge < 0 {
		return errors.New("card max_age: must not be negative")
	}
	if o.JWKSPath != "" && !strings.HasPrefix(o.JWKSPath, "/") {
		return errors.New("card jwks_path: must start with /")
	}
	if o.PathPrefix != "" && (!strings.HasPrefix(o.PathPrefix, "/") || strings.HasSuffix(o.PathPrefix, "/")) {
		return errors.New("card path_prefix: must start with / and not end with /")
	}
	return nil
}

// Handler serves the public A2A 1.0 Agent Card (CARD-2, CARD-3, CARD-6) on
// WellKnownPath and LegacyWellKnownPath (GET and HEAD), with Content-Type
// application/a2a+json, Cache-Control, a strong ETag of the exact bytes
// served and a Last-Modified that only moves when the card content changes;
// conditional requests get 304. With Options.JWKSPath it serves the JWKS
// of its signing keys too. A rendering is cached per base URL.
type Handler struct {
	cfg     Config
	opts    Options
	schemes auth.Schemes
	jwks    []byte
	logger  *zap.Logger

	cacheControl []string // shared, read-only header value
	cache        renderCache
}

// renderCache holds rendered cards by cache key (see cacheKey).
type renderCache struct {
	mu sync.RWMutex
	m  map[string]*servedCard
}

// servedCard is a rendered card with its Last-Modified time.
type servedCard struct {
	*Rendered
	modified time.Time
}

// NewHandler returns the handler of cfg (which the caller validated with
// Config.Validate) and warns through opts.Logger when cfg changed since
// the previous handler of the same card name without a version bump.
func NewHandler(cfg Config, opts Options) (*Handler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	h := &Handler{cfg: cfg, opts: opts, logger: opts.Logger}
	if h.logger == nil {
		h.logger = zap.NewNop()
	}
	if h.opts.ModTimes == nil {
		h.opts.ModTimes = NewModTimes(0, nil, nil)
	}
	h.schemes = opts.Security.Schemes()
	h.cacheControl = []string{"public, max-age=" + strconv.FormatInt(int64(opts.MaxAge/time.Second), 10)}
	h.cache.m = map[string]*servedCard{}
	if h.opts.JWKSPath == "" && len(opts.PublishKeys) > 0 {
		h.opts.JWKSPath = DefaultJWKSPath
	}
	if h.opts.JWKSPath != "" {
		b, err := jws.PublicJWKS(append(append([]*jws.Signer(nil), opts.Signers...), opts.PublishKeys...))
		if err != nil {
			return nil, fmt.Errorf("card jwks_path: %w", err)
		}
		h.jwks = b
	}
	h.warnUnbumpedVersion()
	return h, nil
}

// Runtime returns the runtime facts of the card served to r (nil r: no
// request): the base URL from public_url or r, auth schemes, push and
// thinking settings.
func (h *Handler) Runtime(r *http.Request) Runtime {
	base := h.cfg.PublicURL
	if base == "" && r != nil {
		base = BaseURL(r, h.trusted(r))
	}
	if h.opts.PathPrefix != "" && base != "" {
		base = strings.TrimSuffix(base, "/") + h.opts.PathPrefix + "/" // TURN-10
	}
	return Runtime{
		BaseURL:           base,
		Bearer:            h.schemes.Bearer,
		Basic:             h.schemes.Basic,
		APIKey:            h.schemes.APIKey,
		APIKeyHeader:      h.schemes.APIKeyHeader,
		BearerJWT:         h.schemes.JWT,
		MTLS:              h.schemes.MTLS,
		MTLSWithBearer:    h.schemes.MTLSWithBearer,
		OpenIDConnectURL:  h.opts.Security.openIDConnectURL(),
		OAuth2:            h.opts.Security.oauth2(),
		PushNotifications: h.opts.PushNotifications,
		ThinkingTypes:     h.opts.ThinkingTypes,
		Interfaces:        h.opts.Interfaces,
		Bindings:          h.opts.Bindings,
		GRPCPort:          h.opts.GRPCPort,
		LegacyV03:         h.opts.LegacyV03,
		UpstreamSkills:    h.upstreamSkills(),
		EventLogSize:      h.opts.EventLogSize,
		DedupeWindow:      h.opts.DedupeWindow,
		DedupeAlways:      h.opts.DedupeAlways,
		Tenant:            h.opts.Tenant,
	}
}

// Card builds the public card as served to r, unsigned.
func (h *Handler) Card(r *http.Request) *a2a.AgentCard {
	return Build(&h.cfg, h.Runtime(r))
}

// CardAt builds the public card as served at baseURL (a call's base URL,
// for callers that hold no request), unsigned.
func (h *Handler) CardAt(baseURL string) *a2a.AgentCard {
	rt := h.Runtime(nil)
	rt.BaseURL = baseURL
	return Build(&h.cfg, rt)
}

// Sign signs c with every configured key (no-op without keys). c must be
// complete: every runtime field filled in.
func (h *Handler) Sign(c *a2a.AgentCard) error {
	return jws.SignCard(c, h.opts.Signers...)
}

func (h *Handler) trusted(r *http.Request) bool {
	return h.opts.TrustedProxy != nil && h.opts.TrustedProxy(r)
}

// Handles reports whether r is for this handler: a card path (any
// method: others than GET and HEAD are refused), or a GET or HEAD of the
// JWKS path.
func (h *Handler) Handles(r *http.Request) bool {
	if h.jwks != nil && r.URL.Path == h.opts.JWKSPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		return true
	}
	return r.URL.Path == WellKnownPath || r.URL.Path == LegacyWellKnownPath
}

// HTTPError is a failure of Serve, with the status code to answer.
type HTTPError struct {
	// Code is the HTTP status code.
	Code int
	// Err says what failed.
	Err error
}

// Error implements error.
func (e *HTTPError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *HTTPError) Unwrap() error { return e.Err }

// Serve answers a request Handles accepted. It writes nothing on failure
// and returns an *HTTPError for the caller's error handling (a 405 has its
// Allow header set).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request) error {
	hdr := w.Header()
	if h.jwks != nil && r.URL.Path == h.opts.JWKSPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		hdr.Set("Content-Type", "application/jwk-set+json")
		hdr["Cache-Control"] = h.cacheControl
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.jwks))
		return nil
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		return &HTTPError{Code: http.StatusMethodNotAllowed, Err: errors.New("agent card: method not allowed")}
	}
	c, err := h.rendered(r)
	if err != nil {
		return &HTTPError{Code: http.StatusInternalServerError, Err: fmt.Errorf("rendering agent card: %w", err)}
	}
	hdr["Cache-Control"] = h.cacheControl
	hdr["Etag"] = []string{c.ETag}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, c.ETag) {
		// The common revalidation, answered without http.ServeContent and
		// with the headers RFC 9110 §15.4.5 asks of a 304 (as ServeContent).
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	hdr["Content-Type"] = contentType
	http.ServeContent(w, r, "", c.modified, bytes.NewReader(c.Body))
	return nil
}

// ServeHTTP implements http.Handler: the card (and JWKS) paths as Serve
// answers them, failures as plain-text errors, 404 for other paths.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.Handles(r) {
		http.NotFound(w, r)
		return
	}
	if err := h.Serve(w, r); err != nil {
		var he *HTTPError
		code := http.StatusInternalServerError
		if errors.As(err, &he) {
			code = he.Code
		}
		http.Error(w, http.StatusText(code), code)
	}
}

// rendered returns the signed rendering of the card served to r, from the
// cache when there.
func (h *Handler) rendered(r *http.Request) (*servedCard, error) {
	key := h.cacheKey(r)
	rc := &h.cache
	rc.mu.RLock()
	c, ok := rc.m[key]
	rc.mu.RUnlock()
	if ok {
		return c, nil
	}
	rt := h.Runtime(r)
	built := Build(&h.cfg, rt)
	if err := h.Sign(built); err != nil {
		return nil, err
	}
	rend, err := Render(built)
	if err != nil {
		return nil, err
	}
	// Last-Modified follows the card's content, not the host it is served
	// for: the first-seen time of the card rendered for a fixed base URL.
	// Hosts a client makes up neither move it nor add entries to the store.
	canon := rt
	canon.BaseURL = "https://agent.invalid/"
	ch, err := Render(Build(&h.cfg, canon))
	if err != nil {
		return nil, err
	}
	c = &servedCard{Rendered: rend, modified: h.opts.ModTimes.FirstSeen(ch.Hash)}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.m) >= maxCachedHosts {
		clear(rc.m)
	}
	rc.m[key] = c
	return c, nil
}

// cacheKey identifies what the card served to r depends on (its base URL)
// without building the URL: the raw host, TLS, and the forwarded headers
// of trusted proxies.
func (h *Handler) cacheKey(r *http.Request) string {
	if h.opts.UpstreamSkills != nil {
		_, v := h.opts.UpstreamSkills()
		return strconv.FormatUint(v, 10) + "#" + h.hostKey(r)
	}
	return h.hostKey(r)
}

// upstreamSkills returns the skills of Options.UpstreamSkills (nil: none).
func (h *Handler) upstreamSkills() []a2a.AgentSkill {
	if h.opts.UpstreamSkills == nil {
		return nil
	}
	s, _ := h.opts.UpstreamSkills()
	return s
}

// hostKey is the part of the cache key that depends on the request.
func (h *Handler) hostKey(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return ""
	}
	if !h.trusted(r) {
		if r.TLS != nil {
			return "s|" + r.Host
		}
		return r.Host
	}
	return "t|" + strconv.FormatBool(r.TLS != nil) + "|" + r.Host + "|" + r.Header.Get("X-Forwarded-Proto") + "|" + r.Header.Get("X-Forwarded-Host")
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2: a list of entity
// tags or "*", weak comparison) to etag.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}
