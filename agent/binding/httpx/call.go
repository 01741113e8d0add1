// Package httpx holds what the HTTP bindings of an agent.Handler share: the
// transport settings, the Call built from a request, the echo of the
// activated extensions, the SSE pump and JSON error bodies.
package httpx

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// TransportConfig is the transport settings of the HTTP bindings (JSON-RPC,
// HTTP+JSON and the artifact downloads); the Service knows none of them.
// Zero values take the documented defaults (see WithDefaults).
type TransportConfig struct {
	// KeepAlive is the interval of SSE keep-alive comments. Default 15s.
	KeepAlive time.Duration
	// MaxBodyBytes bounds request bodies. Default 32 MiB.
	MaxBodyBytes int64
	// BaseURL returns the externally visible base URL ("https://h/") of a
	// request, passed to the service as Call.BaseURL (artifact links, the
	// extended card). Default: from the request (Host, TLS), forwarded
	// headers not trusted.
	BaseURL func(r *http.Request) string
	// Tenant is the A2A tenant the endpoint serves (its agent's name,
	// TURN-10), passed as Call.ServedTenant. Default: none.
	Tenant string
	// ExtendedCardCache is how HTTP+JSON answers of GET /extendedAgentCard
	// may be cached (A2A 1.0 §13.3).
	ExtendedCardCache ExtendedCardCache
}

// ExtendedCardCache is the caching of the authenticated extended card
// over HTTP+JSON (A2A 1.0 §13.3): `Cache-Control: private`, a strong ETag
// of the bytes, 304 on a matching If-None-Match, and Vary on the
// credential headers (its content may differ per caller).
type ExtendedCardCache struct {
	// MaxAge is the max-age of the Cache-Control header, in whole seconds
	// (the public card's max_age). Zero: max-age=0.
	MaxAge time.Duration
	// Vary are the request headers the card depends on: Authorization, and
	// the API key header when API keys are on. Default: Authorization.
	Vary []string
}

// WithDefaults returns c with every zero field set to its default.
func (c TransportConfig) WithDefaults() TransportConfig {
	if c.KeepAlive <= 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 32 << 20
	}
	if c.BaseURL == nil {
		c.BaseURL = func(r *http.Request) string { return card.BaseURL(r, false) }
	}
	if len(c.ExtendedCardCache.Vary) == 0 {
		c.ExtendedCardCache.Vary = []string{"Authorization"}
	}
	return c
}

// NewCall builds the Call of a request: the binding label, the principal,
// the REST path's tenant ("" for JSON-RPC, whose tenant is in the params),
// its RequestInfo (the request's own, else a new one: it receives the
// activated extensions the binding echoes), the base URL
// (c.BaseURL: c has its defaults applied, see WithDefaults), the A2A-Version header (or query
// parameter, RPC-2), the extensions of the A2A-Extensions headers
// (RPC-3), the Last-Event-ID header of a resumed stream (RPC-17) and the
// credential's scopes and claims (agent.IdentityFrom, AUTH-8).
func (c TransportConfig) NewCall(r *http.Request, binding, principal, tenant string) agent.Call {
	v := r.Header.Get("A2A-Version")
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	exts := a2a.ParseExtensions(r.Header.Values("A2A-Extensions")...)
	info := agent.RequestInfoFrom(r.Context())
	if info == nil {
		info = new(agent.RequestInfo)
	}
	return agent.Call{Binding: binding, Principal: principal, Identity: agent.IdentityFrom(r.Context()), Tenant: tenant, ServedTenant: c.Tenant, BaseURL: c.BaseURL(r), Version: v, Extensions: exts,
		LastEventID: r.Header.Get("Last-Event-ID"), Info: info}
}

// EchoExtensions sets the A2A-Extensions response header to the activated
// extensions (RPC-3); nothing when there are none.
func EchoExtensions(w http.ResponseWriter, active []string) {
	if len(active) > 0 {
		w.Header().Set("A2A-Extensions", strings.Join(active, ", "))
	}
}

// JSONContentType reports whether a request Content-Type is acceptable JSON
// (RPC-15): application/json or application/a2a+json, any case, with any
// parameters (charset=utf-8). A request without a Content-Type is
// accepted (lenient, as most servers are: its body must still be JSON).
func JSONContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "application/a2a+json")
}

// ErrContentType is the refusal of a request whose Content-Type is not
// JSON (RPC-15): ContentTypeNotSupportedError (-32005, HTTP+JSON 415,
// reason CONTENT_TYPE_NOT_SUPPORTED), before its body is read.
func ErrContentType() *a2a.Error {
	return a2a.NewError(a2a.CodeContentTypeNotSupported, "Content-Type must be application/json or application/a2a+json")
}

// WriteJSON writes v as a JSON body with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// RetryAfter sets the Retry-After header of a refusal that names a delay
// (AUTH-6 rate and turn limits).
func RetryAfter(w http.ResponseWriter, e *a2a.Error) {
	if n := e.RetryAfterSeconds(); n > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(n))
	}
}
