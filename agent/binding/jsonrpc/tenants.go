package jsonrpc

import (
	"encoding/json"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// Tenants resolves the A2A tenant a frame names to the service of the
// agent of the same site serving it (TURN-10). It returns false for a
// tenant the site does not serve and for an agent whose auth differs from
// the one the carrier checked: such a frame stays with the carrier's own
// service, which answers a tenant it does not serve with
// TaskNotFoundError, so a frame never reaches an agent whose auth it did
// not pass.
type Tenants func(tenant string) (*agent.Service, bool)

// WithTenants returns a dispatcher like d that serves a message whose
// params name the tenant of another agent of the site (the top-level
// params.tenant member) with that agent's service, as resolved by t: its
// tenant check, limits, owner scope and backend (TURN-10). Frame carriers
// (WebSocket, Redis Streams, stdio) use it; HTTP routes by path instead.
func (d *Dispatcher) WithTenants(t Tenants) *Dispatcher {
	cp := *d
	cp.tenants = t
	return &cp
}

// route returns the service and call for call: another agent's when its
// params name a tenant t resolves (the call then serves that tenant, at
// that agent's base URL), else d's own.
func (d *Dispatcher) route(c agent.Call, call rpc.Call) (*agent.Service, agent.Call) {
	if d.tenants == nil || len(call.Params) == 0 {
		return d.svc, c
	}
	var p struct {
		Tenant string `json:"tenant"`
	}
	if json.Unmarshal(call.Params, &p) != nil || p.Tenant == "" || p.Tenant == c.ServedTenant {
		return d.svc, c
	}
	svc, ok := d.tenants(p.Tenant)
	if !ok || svc == nil || svc == d.svc {
		return d.svc, c
	}
	c.ServedTenant = p.Tenant
	if c.BaseURL != "" {
		c.BaseURL = strings.TrimSuffix(c.BaseURL, "/") + "/" + p.Tenant + "/"
	}
	return svc, c
}

// forTenant returns the dispatcher serving a single call: d, or one over
// the service of the agent its params name (route), with its call.
func (d *Dispatcher) forTenant(c agent.Call, call rpc.Call) (*Dispatcher, agent.Call) {
	svc, c2 := d.route(c, call)
	if svc == d.svc {
		return d, c
	}
	return &Dispatcher{svc: svc, binding: d.binding}, c2
}
