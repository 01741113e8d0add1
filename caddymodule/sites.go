package caddymodule

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// siteState is what the App keeps of its multi-agent sites.
type siteState struct {
	mu       sync.Mutex
	counters map[string]*agent.LimitCounters
	reg      *siteRegistry
}

// siteRegistry is the agents of the config's multi-agent sites (TURN-10),
// found in the http app once the first frame needs them: site → tenant
// ("" for the root) → the agent's handler and its auth.
type siteRegistry struct {
	agents map[string]map[string]siteAgent
	byH    map[*AgentHandler]siteAgent
}

// siteAgent is one agent of a site.
type siteAgent struct {
	h *AgentHandler
	// auth is the agent's a2a_auth config as JSON ("" without auth): two
	// agents with the same auth admit the same callers as the same
	// principals.
	auth string
}

// handlerTenant is the A2A tenant a handler serves: its agent's name
// (the card's path prefix), "" for a site root.
func handlerTenant(h *AgentHandler) string {
	if h.Card == nil {
		return ""
	}
	return strings.TrimPrefix(h.Card.PathPrefix, "/")
}

// agentName is the agent label of h's metrics (OPS-2): the tenant it
// serves (NAME of an `agent NAME` block), agent.DefaultAgentName for a
// site root. It comes from the config only, so the label is bounded.
func agentName(h *AgentHandler) string {
	if t := handlerTenant(h); t != "" {
		return t
	}
	return agent.DefaultAgentName
}

// siteAgents returns the registry, built on first use from the http
// app's routes (agentAuth); the config is provisioned by then.
func (a *App) siteAgents() *siteRegistry {
	a.site.mu.Lock()
	defer a.site.mu.Unlock()
	if a.site.reg != nil {
		return a.site.reg
	}
	reg := &siteRegistry{agents: map[string]map[string]siteAgent{}, byH: map[*AgentHandler]siteAgent{}}
	guards, _ := agentAuth(a.ctx)
	for h, guard := range guards {
		if h.Site == "" {
			continue
		}
		sa := siteAgent{h: h}
		if guard != nil {
			b, _ := json.Marshal(guard.Config)
			sa.auth = string(b)
		}
		if reg.agents[h.Site] == nil {
			reg.agents[h.Site] = map[string]siteAgent{}
		}
		reg.agents[h.Site][handlerTenant(h)] = sa
		reg.byH[h] = sa
	}
	a.site.reg = reg
	return reg
}

// tenantsOf returns how the frame carriers of h find the other agents of
// its site (TURN-10): by tenant name, only an agent whose auth is the same
// as h's (inherited), so a frame authenticated by h's carrier never
// reaches an agent whose auth it did not pass. Only a site root routes,
// as on HTTP (an agent's own path answers another agent's tenant with
// TaskNotFoundError). Nil when h is no site root.
func (a *App) tenantsOf(h *AgentHandler) jsonrpc.Tenants {
	if h.Site == "" || a == nil || handlerTenant(h) != "" {
		return nil
	}
	return func(tenant string) (*jsonrpc.Dispatcher, bool) {
		reg := a.siteAgents()
		from, ok := reg.byH[h]
		if !ok {
			return nil, false
		}
		to, ok := reg.agents[h.Site][tenant]
		if !ok || to.h == h || to.auth != from.auth || to.h.handler == nil {
			return nil, false
		}
		return to.h.handler.Dispatcher(), true
	}
}
