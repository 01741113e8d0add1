package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/rewrite"
)

// namedAgent is one `agent NAME { … }` block of an a2a block (TURN-10):
// an agent served under /NAME/ of the site.
type namedAgent struct {
	name string
	hs   *a2aHandlers
}

// agentNameRe is what an agent name must look like: one lower-case path
// segment.
var agentNameRe = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// reservedAgentNames are names that would shadow a path the site root
// serves (REST routes, the catalog, health) or the catalog's default
// entry.
var reservedAgentNames = map[string]bool{
	"agents": true, "artifacts": true, "default": true, "health": true,
	"message": true, "tasks": true, "extendedagentcard": true,
}

// unmarshalAgent parses `agent <name> { card { … } [auth { … }] <agent
// options…> }`; d is on the agent token.
func (hs *a2aHandlers) unmarshalAgent(d *caddyfile.Dispenser) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	name := d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	if !agentNameRe.MatchString(name) {
		return d.Errf("agent %q: the name must be one path segment of lower-case letters, digits, '-' and '_' (at most 63, not starting with '-' or '_')", name)
	}
	if reservedAgentNames[name] {
		return d.Errf("agent %q: the name is reserved (it is a path of the site root)", name)
	}
	for _, a := range hs.agents {
		if a.name == name {
			return d.Errf("agent %q: defined twice", name)
		}
	}
	sub := newA2AHandlers()
	if err := sub.unmarshalBlock(d, "agent "+name, false); err != nil {
		return err
	}
	hs.agents = append(hs.agents, &namedAgent{name: name, hs: sub})
	return nil
}

// finishAgents completes the agent blocks once the whole a2a block is
// parsed: each is served under /<name> (card path_prefix), inherits the
// site's auth block unless it has its own and the site card's public_url
// and security_requirements_form unless its card sets them, and scopes its
// tasks, contexts and push configs by its name unless owner_scope is set
// (TURN-10). A name that collides with the root's WebSocket path or an
// owner scope equal to the root agent's is a config error.
func (hs *a2aHandlers) finishAgents(d *caddyfile.Dispenser) error {
	if len(hs.agents) == 0 {
		return nil
	}
	rootScope, err := hs.agent.scopeWith(hs.card)
	if err != nil {
		return d.Err(err.Error())
	}
	wsSeg := ""
	if hs.agent.WebSocket != nil {
		wsSeg = strings.SplitN(strings.TrimPrefix(hs.agent.WebSocket.path(), "/"), "/", 2)[0]
	}
	for _, a := range hs.agents {
		if a.name == wsSeg {
			return d.Errf("agent %q: the name is the site's websocket path", a.name)
		}
		sub := a.hs
		if !sub.ownAuth {
			auth := *hs.auth
			sub.auth = &auth
		}
		if sub.card.PublicURL == "" {
			sub.card.PublicURL = hs.card.PublicURL
		}
		if sub.card.SecurityRequirementsForm == "" {
			sub.card.SecurityRequirementsForm = hs.card.SecurityRequirementsForm // CARD-4
		}
		sub.card.PathPrefix = "/" + a.name
		if sub.agent.OwnerScope == "" {
			sub.agent.OwnerScope = a.name
		}
		if scope, _ := sub.agent.scopeWith(sub.card); scope == rootScope {
			return d.Errf("agent %q: its owner scope %q is the root agent's; set owner_scope on one of them", a.name, scope)
		}
		sub.finish()
	}
	return nil
}

// scopeWith is the owner scope the handler would have with card c (see
// ownerScope), before attach.
func (h *AgentHandler) scopeWith(c *CardHandler) (string, error) {
	tmp := *h
	tmp.Card = c
	return tmp.ownerScope()
}

// catalog is the a2a_agents handler listing the agents of the block, nil
// without agent blocks.
func (hs *a2aHandlers) catalog() *CatalogHandler {
	if len(hs.agents) == 0 {
		return nil
	}
	c := &CatalogHandler{PublicURL: hs.card.PublicURL}
	for _, a := range hs.agents {
		c.Agents = append(c.Agents, a.name)
	}
	return c
}

// agentRoutes are a route of the tenant router (a2a_tenants, for POST /:
// a JSON-RPC tenant field naming an agent goes to its route), then the
// routes of the agent blocks, in order, each matched
// on /<name> and /<name>/*, stripping the prefix (Caddy's rewrite
// strip_path_prefix) before the agent's a2a_card, a2a_auth and a2a
// handlers, and terminal: nothing of the root agent sees an agent's
// requests. A matcher on the directive cannot be combined with agents.
func agentRoutes(h httpcaddyfile.Helper, hs *a2aHandlers, matcherSet caddy.ModuleMap) ([]httpcaddyfile.ConfigValue, error) {
	if len(hs.agents) > 0 && matcherSet != nil {
		return nil, h.Err("a2a: agent blocks need the a2a directive without a matcher")
	}
	var values []httpcaddyfile.ConfigValue
	if len(hs.agents) > 0 {
		n, _ := h.State["a2a.sites"].(int)
		h.State["a2a.sites"] = n + 1
		hs.bindSite(fmt.Sprintf("site%d", n))
		router := new(TenantRouter)
		for _, a := range hs.agents {
			router.Agents = append(router.Agents, a.name)
		}
		raws, err := handlersJSON(h, []caddyhttp.MiddlewareHandler{router})
		if err != nil {
			return nil, err
		}
		methods, _ := json.Marshal([]string{http.MethodPost})
		root, _ := json.Marshal([]string{"/", grpcServicePrefix + "*"})
		values = append(values, httpcaddyfile.ConfigValue{Class: "route", Value: caddyhttp.Route{
			MatcherSetsRaw: []caddy.ModuleMap{{"method": methods, "path": root}},
			HandlersRaw:    raws,
		}})
	}
	for _, a := range hs.agents {
		prefix := "/" + a.name
		raws, err := handlersJSON(h, []caddyhttp.MiddlewareHandler{
			&rewrite.Rewrite{StripPathPrefix: prefix}, a.hs.card, a.hs.auth, a.hs.agent,
		})
		if err != nil {
			return nil, err
		}
		paths, _ := json.Marshal([]string{prefix, prefix + "/*"})
		values = append(values, httpcaddyfile.ConfigValue{Class: "route", Value: caddyhttp.Route{
			MatcherSetsRaw: []caddy.ModuleMap{{"path": paths}},
			HandlersRaw:    raws,
			Terminal:       true,
		}})
	}
	return values, nil
}

// bindSite names the site of an a2a block with agent blocks and ties its
// handlers together: each gets the site's name (their frame carriers
// route a tenant to each other, TURN-10), and each agent that inherits the
// root's auth inherits its limits too, counted once per principal across
// the root and those agents (AUTH-10; see inheritLimits).
func (hs *a2aHandlers) bindSite(site string) {
	hs.agent.Site = site
	for _, a := range hs.agents {
		a.hs.agent.Site = site
		if !a.hs.ownAuth {
			inheritLimits(hs.agent, a.hs.agent, site)
		}
	}
}

// handlersJSON encodes handlers with their "handler" name fields.
func handlersJSON(h httpcaddyfile.Helper, mods []caddyhttp.MiddlewareHandler) ([]json.RawMessage, error) {
	raws := make([]json.RawMessage, 0, len(mods))
	for _, mod := range mods {
		raw, err := handlerJSON(mod)
		if err != nil {
			return nil, h.Errf("encoding a2a handler: %v", err)
		}
		raws = append(raws, raw)
	}
	return raws, nil
}
