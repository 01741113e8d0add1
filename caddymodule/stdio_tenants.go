package caddymodule

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// handlerSite is what stdio reads of an a2a handler's JSON: its site and
// tenant (TURN-10).
type handlerSite struct {
	Site string `json:"site"`
	Card struct {
		PathPrefix string `json:"path_prefix"`
	} `json:"card"`
}

// siteOf reads the handler's site fields (zero when unreadable).
func (c stdioCandidate) siteOf() handlerSite {
	var hs handlerSite
	_ = json.Unmarshal(c.handler, &hs)
	return hs
}

// tenant is the tenant the candidate serves, "" for a site root.
func (c stdioCandidate) tenant() string {
	return strings.TrimPrefix(c.siteOf().Card.PathPrefix, "/")
}

// stdioSiblings are the other agents of cand's multi-agent site whose
// auth is the same as cand's, by tenant: stdio serves a request naming
// one of them with it, like the WebSocket and Redis Streams carriers
// (TURN-10). Agents with an auth of their own are left out: a request
// never reaches an agent whose auth is not the one of the agent stdio
// runs.
func stdioSiblings(cands []stdioCandidate, cand stdioCandidate) map[string]json.RawMessage {
	site := cand.siteOf().Site
	if site == "" || cand.tenant() != "" {
		return nil // only a site root routes tenants, as on HTTP
	}
	out := map[string]json.RawMessage{}
	for _, c := range cands {
		t := c.tenant()
		if c.server != cand.server || c.siteOf().Site != site || t == "" || t == cand.tenant() || !bytes.Equal(c.auth, cand.auth) {
			continue
		}
		if raw, err := withoutRedisRPC(c.handler); err == nil {
			out[t] = raw
		}
	}
	return out
}

// stdioTenants serves the tenants of the StdioApp's sibling agents.
func (a *StdioApp) stdioTenants() jsonrpc.Tenants {
	if len(a.agents) == 0 {
		return nil
	}
	return func(tenant string) (*jsonrpc.Dispatcher, bool) {
		h, ok := a.agents[tenant]
		if !ok || h.handler == nil {
			return nil, false
		}
		return h.handler.Dispatcher(), true
	}
}

// siblings are the provisioned sibling agents.
func (a *StdioApp) siblings() []*AgentHandler {
	out := make([]*AgentHandler, 0, len(a.agents))
	for _, h := range a.agents {
		out = append(out, h)
	}
	return out
}
