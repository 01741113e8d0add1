package caddymodule

import (
	"errors"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(HealthHandler{})
}

// HealthHandler answers GET (and HEAD) /health with 200 and
// {"status":"healthy"}; every other request goes to the next handler. It is
// public: the a2a directive puts it before authentication.
type HealthHandler struct{}

// CaddyModule returns the Caddy module information.
func (HealthHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_health",
		New: func() caddy.Module { return new(HealthHandler) },
	}
}

var healthBody = []byte(`{"status":"healthy"}`)

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *HealthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.URL.Path != "/health" {
		return next.ServeHTTP(w, r) // from a small frame: see AuthHandler.ServeHTTP
	}
	return serveHealth(w, r)
}

// serveHealth answers GET and HEAD /health.
func serveHealth(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return caddyhttp.Error(http.StatusMethodNotAllowed, errors.New("health: method not allowed"))
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(healthBody)
	}
	return nil
}

var _ caddyhttp.MiddlewareHandler = (*HealthHandler)(nil)
