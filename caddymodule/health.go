package caddymodule

import (
	"errors"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func init() {
	caddy.RegisterModule(HealthHandler{})
}

// HealthHandler answers GET (and HEAD) /health with 200 and
// {"status":"healthy"} (liveness), and /health?ready=1 with readiness
// (OPS-8): 200 when the store, the redis-streams push queue and the
// instance lease are usable, else 503, both with a JSON body naming each
// check. Every other request goes to the next handler. It is public: the
// a2a directive puts it before authentication.
type HealthHandler struct {
	// app finds the config's a2a app (readiness) at the first readiness
	// probe: the a2a handlers of the config have loaded it by then. Nil
	// when the config has none.
	app func() *App
}

// CaddyModule returns the Caddy module information.
func (HealthHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_health",
		New: func() caddy.Module { return new(HealthHandler) },
	}
}

// Provision arranges to find the config's a2a app, whose store readiness
// checks. The app is not loaded here: a config whose health handler
// stands without an a2a handler must not start one (nor open a data
// directory).
func (h *HealthHandler) Provision(ctx caddy.Context) error {
	h.app = sync.OnceValue(func() *App {
		app, err := ctx.AppIfConfigured("a2a")
		if err != nil {
			return nil
		}
		a, _ := app.(*App)
		return a
	})
	return nil
}

var healthBody = []byte(`{"status":"healthy"}`)

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *HealthHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.URL.Path != "/health" {
		return next.ServeHTTP(w, r) // from a small frame: see AuthHandler.ServeHTTP
	}
	if r.URL.RawQuery != "" && r.URL.Query().Get("ready") == "1" {
		return h.serveReady(w, r)
	}
	return serveHealth(w, r)
}

// serveHealth answers GET and HEAD /health.
func serveHealth(w http.ResponseWriter, r *http.Request) error {
	if err := healthMethod(w, r); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(healthBody)
	}
	return nil
}

// serveReady answers GET and HEAD /health?ready=1 (OPS-8).
func (h *HealthHandler) serveReady(w http.ResponseWriter, r *http.Request) error {
	if err := healthMethod(w, r); err != nil {
		return err
	}
	res := nothingToCheck // no a2a app in the config: no store, no queue
	if h.app != nil {
		if app := h.app(); app != nil {
			res = notConfigured
			if app.shared != nil && app.ready != nil {
				res = app.probe(r.Context())
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if res.Ready {
		w.WriteHeader(http.StatusOK)
	} else {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	if r.Method == http.MethodGet {
		_, _ = w.Write(res.Body)
	}
	return nil
}

// healthMethod refuses methods other than GET and HEAD.
func healthMethod(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return caddyhttp.Error(http.StatusMethodNotAllowed, errors.New("health: method not allowed"))
	}
	return nil
}

var (
	_ caddyhttp.MiddlewareHandler = (*HealthHandler)(nil)
	_ caddy.Provisioner           = (*HealthHandler)(nil)
)
