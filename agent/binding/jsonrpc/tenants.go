package jsonrpc

import (
	"encoding/json"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// Tenants resolves the A2A tenant a frame names to the dispatcher of the
// agent of the same site serving it (TURN-10). It returns false for a
// tenant the site does not serve and for an agent whose auth differs from
// the one the carrier checked: such a frame stays with the carrier's own
// agent, which answers a tenant it does not serve with
// TaskNotFoundError, so a frame never reaches an agent whose auth it did
// not pass.
type Tenants func(tenant string) (*Dispatcher, bool)

// WithTenants returns a dispatcher like d that serves a message whose
// params name the tenant of another agent of the site (the top-level
// params.tenant member) with that agent's dispatcher, as resolved by t: its
// tenant check, limits, owner scope and backend (TURN-10). Frame carriers
// (WebSocket, Redis Streams, stdio) use it; HTTP routes by path instead.
func (d *Dispatcher) WithTenants(t Tenants) *Dispatcher {
	cp := *d
	cp.tenants = t
	return &cp
}

// forTenant returns the dispatcher serving a single call and its call:
// another agent's when its params name a tenant d.tenants resolves (the
// call then serves that tenant, at that agent's base URL), else d's own.
func (d *Dispatcher) forTenant(c agent.Call, call rpc.Call) (*Dispatcher, agent.Call) {
	if d.tenants == nil || len(call.Params) == 0 {
		return d, c
	}
	var p struct {
		Tenant string `json:"tenant"`
	}
	if json.Unmarshal(call.Params, &p) != nil || p.Tenant == "" || p.Tenant == c.ServedTenant {
		return d, c
	}
	td, ok := d.tenants(p.Tenant)
	if !ok || td == nil || td == d || td.h == d.h {
		return d, c
	}
	c.ServedTenant = p.Tenant
	if c.BaseURL != "" {
		c.BaseURL = strings.TrimSuffix(c.BaseURL, "/") + "/" + p.Tenant + "/"
	}
	return td, c
}
