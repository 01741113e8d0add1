package caddymodule

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

func init() {
	caddy.RegisterModule(CatalogHandler{})
}

// CatalogPath is where CatalogHandler serves the site's agent list.
const CatalogPath = "/agents"

// CatalogHandler answers GET (and HEAD) /agents with the agents of a site
// that fronts several (TURN-10), as JSON:
//
//	{"agents":[{"name":"default","default":true,"url":"http://h/","card":"http://h/.well-known/agent-card.json"},
//	           {"name":"planner","url":"http://h/planner/","card":"http://h/planner/.well-known/agent-card.json"}]}
//
// The default agent (the site root's) comes first. It is public like the
// card: the a2a directive puts it before authentication. Every other
// request goes to the next handler.
type CatalogHandler struct {
	// Agents are the names of the agents served under /<name>/, in order.
	Agents []string `json:"agents,omitempty"`
	// PublicURL is the site's externally visible base URL (the root card's
	// public_url). Default: the request's scheme and Host, honouring
	// X-Forwarded-Proto/Host only from trusted proxies.
	PublicURL string `json:"public_url,omitempty"`
}

// catalogEntry is one agent of the catalog.
type catalogEntry struct {
	Name    string `json:"name"`
	Default bool   `json:"default,omitempty"`
	URL     string `json:"url"`
	Card    string `json:"card"`
}

// CaddyModule returns the Caddy module information.
func (CatalogHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_agents",
		New: func() caddy.Module { return new(CatalogHandler) },
	}
}

// Validate checks the agent names (one path segment each, see
// agentNameRe) and the public URL.
func (h *CatalogHandler) Validate() error {
	for _, n := range h.Agents {
		if !agentNameRe.MatchString(n) || reservedAgentNames[n] {
			return errors.New("a2a_agents: invalid agent name")
		}
	}
	if h.PublicURL != "" && !strings.HasPrefix(h.PublicURL, "http://") && !strings.HasPrefix(h.PublicURL, "https://") {
		return errors.New("a2a_agents: public_url must be an http(s) URL")
	}
	return nil
}

// ServeHTTP implements caddyhttp.MiddlewareHandler.
func (h *CatalogHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.URL.Path != CatalogPath {
		return next.ServeHTTP(w, r)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return caddyhttp.Error(http.StatusMethodNotAllowed, errors.New("agent catalog: method not allowed"))
	}
	base := h.PublicURL
	if base == "" {
		base = card.BaseURL(r, trustedProxy(r))
	}
	base = strings.TrimSuffix(base, "/") + "/"
	list := struct {
		Agents []catalogEntry `json:"agents"`
	}{Agents: []catalogEntry{{Name: "default", Default: true, URL: base, Card: base + strings.TrimPrefix(card.WellKnownPath, "/")}}}
	for _, n := range h.Agents {
		u := base + n + "/"
		list.Agents = append(list.Agents, catalogEntry{Name: n, URL: u, Card: u + strings.TrimPrefix(card.WellKnownPath, "/")})
	}
	b, err := json.Marshal(list)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, err = w.Write(b)
	}
	return err
}

var (
	_ caddy.Validator             = (*CatalogHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*CatalogHandler)(nil)
)
