package agent

import (
	"errors"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Handler serves a Service over HTTP: JSON-RPC 2.0 on POST / and the
// HTTP+JSON (REST) routes of A2A 1.0.
type Handler struct {
	svc *Service
}

// NewHandler returns the HTTP bindings of svc.
func NewHandler(svc *Service) *Handler { return &Handler{svc: svc} }

// Service returns the service behind the handler.
func (h *Handler) Service() *Service { return h.svc }

// Serve answers r when its path belongs to an A2A binding and reports
// whether it did; other requests are left to the caller. principal is the
// authenticated caller ("" when auth is off).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) bool {
	principal = h.svc.owner(principal)
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

// checkVersion applies RPC-2: 1.x is served with 1.0 semantics; a missing
// value means 0.3, which is not supported.
func checkVersion(r *http.Request) error {
	v := r.Header.Get("A2A-Version")
	if v == "" {
		v = r.URL.Query().Get("A2A-Version")
	}
	v = strings.TrimSpace(v)
	if v == "" {
		return &a2a.Error{Code: a2a.CodeVersionNotSupported, Message: "A2A version 0.3 is not supported (no A2A-Version header was sent); send A2A-Version: 1.0", Metadata: map[string]string{"supportedVersions": "1.0"}}
	}
	major, _, _ := strings.Cut(v, ".")
	if major != "1" {
		return &a2a.Error{Code: a2a.CodeVersionNotSupported, Message: "A2A version " + truncateHeader(v) + " is not supported; this agent speaks 1.0", Metadata: map[string]string{"supportedVersions": "1.0"}}
	}
	return nil
}

func truncateHeader(v string) string {
	if len(v) > 16 {
		v = v[:16]
	}
	return strconv.Quote(v)
}

// checkExtensions applies RPC-3 and echoes the activated extensions.
func (h *Handler) checkExtensions(w http.ResponseWriter, r *http.Request) error {
	requested := map[string]bool{}
	for _, line := range r.Header.Values("A2A-Extensions") {
		for _, uri := range strings.Split(line, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				requested[uri] = true
			}
		}
	}
	for _, req := range h.svc.cfg.RequiredExtensions {
		if !requested[req] {
			return &a2a.Error{Code: a2a.CodeExtensionSupportRequired, Message: "This agent requires the extension " + req + "; list it in the A2A-Extensions header", Metadata: map[string]string{"extension": req}}
		}
	}
	var active []string
	for _, list := range [][]string{h.svc.cfg.Extensions, h.svc.cfg.RequiredExtensions} {
		for _, uri := range list {
			if requested[uri] && !slices.Contains(active, uri) {
				active = append(active, uri)
			}
		}
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
