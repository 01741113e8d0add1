package agent

import (
	"errors"
	"mime"
	"net/http"
	"strings"
	"time"

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
	return c
}

// Handler serves a Service over HTTP: JSON-RPC 2.0 on POST / and the
// HTTP+JSON (REST) routes of A2A 1.0.
type Handler struct {
	svc *Service
	tc  TransportConfig
}

// NewHandler returns the HTTP bindings of svc with the transport settings
// tc (defaults applied).
func NewHandler(svc *Service, tc TransportConfig) *Handler {
	return &Handler{svc: svc, tc: tc.WithDefaults()}
}

// Service returns the service behind the handler.
func (h *Handler) Service() *Service { return h.svc }

// Transport returns the handler's effective transport settings.
func (h *Handler) Transport() TransportConfig { return h.tc }

// Serve answers r when its path belongs to an A2A binding and reports
// whether it did; other requests are left to the caller. principal is the
// authenticated caller ("" when auth is off); the service scopes it.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) bool {
	if r.URL.Path == "/" || r.URL.Path == "" {
		if r.Method != http.MethodPost {
			return false
		}
		h.serveJSONRPC(w, r, principal)
		return true
	}
	if strings.HasPrefix(r.URL.Path, "/artifacts/") {
		return h.serveArtifact(w, r, principal)
	}
	return h.serveREST(w, r, principal)
}

// newCall builds the Call of a request: the principal, the REST path's
// tenant ("" for JSON-RPC, whose tenant is in the params), the base URL,
// the A2A-Version header (or query parameter, RPC-2) and the extensions of
// the A2A-Extensions headers (RPC-3).
func (h *Handler) newCall(r *http.Request, principal, tenant string) Call {
	v := r.Header.Get("A2A-Version")
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	var exts []string
	for _, line := range r.Header.Values("A2A-Extensions") {
		for _, uri := range strings.Split(line, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				exts = append(exts, uri)
			}
		}
	}
	return Call{Principal: principal, Tenant: tenant, BaseURL: h.tc.BaseURL(r), Version: v, Extensions: exts}
}

// precheck applies the version and extension rules to a call (RPC-2,
// RPC-3) and echoes the activated extensions.
func (h *Handler) precheck(w http.ResponseWriter, call Call) error {
	active, err := h.svc.Negotiate(call)
	if err != nil {
		return err
	}
	if len(active) > 0 {
		w.Header().Set("A2A-Extensions", strings.Join(active, ", "))
	}
	return nil
}

// jsonContentType reports whether a request Content-Type is acceptable JSON.
func jsonContentType(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && (mt == "application/json" || mt == "application/a2a+json")
}

// asA2AError converts any error into a client-safe A2A error.
func asA2AError(err error) *a2a.Error {
	var ae *a2a.Error
	if errors.As(err, &ae) {
		return ae
	}
	return a2a.ErrInternal()
}
