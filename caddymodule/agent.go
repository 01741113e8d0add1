package caddymodule

import (
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(AgentHandler{})
}

// AgentHandler serves the A2A 1.0 JSON-RPC binding on POST / and the
// HTTP+JSON (REST) routes, running turns through a backend.
//
// (Work in progress: the protocol core lands with the next change.)
type AgentHandler struct {
}

// CaddyModule returns the Caddy module information.
func (AgentHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a",
		New: func() caddy.Module { return new(AgentHandler) },
	}
}

// unmarshalOption parses one agent subdirective of the a2a Caddyfile block
// (backend, idle_timeout, context_wait, …). It reports false when the
// current token is not one of its options.
func (h *AgentHandler) unmarshalOption(d *caddyfile.Dispenser) (bool, error) {
	return false, nil
}

// attach receives the card and auth handlers built by the same a2a
// directive, so the agent handler can serve the extended card and know
// which schemes guard it.
func (h *AgentHandler) attach(card *CardHandler, auth *AuthHandler) {}

// ServeHTTP passes every request on until the protocol core lands.
func (h *AgentHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return next.ServeHTTP(w, r)
}

var _ caddyhttp.MiddlewareHandler = (*AgentHandler)(nil)
