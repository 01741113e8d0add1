package caddymodule

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(TenantRouter{})
}

// defaultTenantPeekBytes bounds the JSON-RPC body TenantRouter reads. It
// runs before authentication, so it is kept well below the bindings' body
// limit: a stranger cannot make it hold more than this per request.
const defaultTenantPeekBytes = 1 << 20

// TenantRouter sends a JSON-RPC request to the site root (POST /) whose
// params name the A2A tenant of one of the site's agents (`"tenant":
// "planner"`) to that agent, by rewriting the path to /<tenant>/ for the
// agent routes that follow (TURN-10). A request naming no tenant, or one
// the site does not serve, goes on unchanged (the root agent answers an
// unknown tenant with TaskNotFoundError). The a2a directive puts it in a
// route of its own before the agent routes, so the agent's own auth
// applies. REST `/{tenant}/…` routes need no router: the agent routes
// match them by path.
type TenantRouter struct {
	// Agents are the tenant names served (the agents' names).
	Agents []string `json:"agents,omitempty"`
	// MaxBodySize bounds the body read to find the tenant, in bytes. It is
	// read before authentication; a larger body goes on to the root agent
	// unchanged, which answers a tenant it does not serve with
	// TaskNotFoundError (send such requests to /<agent>/ instead).
	// Default: 1048576 (1 MiB).
	MaxBodySize int64 `json:"max_body_size,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (TenantRouter) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_tenants",
		New: func() caddy.Module { return new(TenantRouter) },
	}
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *TenantRouter) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodPost || r.URL.Path != "/" || r.Body == nil || len(h.Agents) == 0 {
		return next.ServeHTTP(w, r)
	}
	limit := h.MaxBodySize
	if limit <= 0 {
		limit = defaultTenantPeekBytes
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	// Whatever was read goes back in front of the rest of the body.
	r.Body = readCloser{Reader: io.MultiReader(bytes.NewReader(body), r.Body), Closer: r.Body}
	if err != nil || int64(len(body)) > limit {
		return next.ServeHTTP(w, r)
	}
	var env struct {
		Params struct {
			Tenant string `json:"tenant"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &env) == nil && env.Params.Tenant != "" && slices.Contains(h.Agents, env.Params.Tenant) {
		r.URL.Path = "/" + env.Params.Tenant + "/"
		r.URL.RawPath = ""
	}
	return next.ServeHTTP(w, r)
}

// readCloser reads from Reader and closes Closer.
type readCloser struct {
	io.Reader
	io.Closer
}

var _ caddyhttp.MiddlewareHandler = (*TenantRouter)(nil)
