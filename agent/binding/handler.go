// Package binding serves an agent.Handler over HTTP: it routes a request
// to the JSON-RPC binding (POST /), the HTTP+JSON binding (package rest)
// or the artifact downloads (/artifacts/..., TURN-7).
package binding

import (
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/rest"
)

// Handler serves an agent.Handler over HTTP: JSON-RPC 2.0 on POST /, the
// HTTP+JSON (REST) routes of A2A 1.0 and the artifact downloads.
type Handler struct {
	h    agent.Handler
	d    *jsonrpc.Dispatcher
	tc   httpx.TransportConfig
	rpc  *jsonrpc.Handler
	rest *rest.Handler
}

// NewHandler returns the HTTP bindings of the dispatcher d (JSON-RPC) and
// of its handler (HTTP+JSON, artifacts) with the transport settings tc
// (defaults applied).
func NewHandler(d *jsonrpc.Dispatcher, tc httpx.TransportConfig) *Handler {
	tc = tc.WithDefaults()
	h := d.Handler()
	return &Handler{h: h, d: d, tc: tc, rpc: jsonrpc.New(d, tc), rest: rest.New(h, tc)}
}

// Dispatcher returns the JSON-RPC dispatcher behind the handler, which
// the frame carriers (WebSocket, stdio, Redis Streams) share.
func (h *Handler) Dispatcher() *jsonrpc.Dispatcher { return h.d }

// Transport returns the handler's effective transport settings.
func (h *Handler) Transport() httpx.TransportConfig { return h.tc }

// Serve answers r when its path belongs to an A2A binding and reports
// whether it did; other requests are left to the caller. principal is the
// authenticated caller ("" when auth is off); the service scopes it.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) bool {
	if r.URL.Path == "/" || r.URL.Path == "" {
		if r.Method != http.MethodPost {
			return false
		}
		h.rpc.Serve(w, r, principal)
		return true
	}
	if strings.HasPrefix(r.URL.Path, "/artifacts/") {
		return h.serveArtifact(w, r, principal)
	}
	return h.rest.Serve(w, r, principal)
}
