package card

import (
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Interface is an interface served at a path of its own under the base
// URL, advertised after the Bindings (XPORT-3: the WebSocket binding at
// ws[s]://host/ws).
type Interface struct {
	// Binding is the protocolBinding, e.g. "websocket".
	Binding string
	// Path is the interface's path below the base URL, e.g. "/ws".
	Path string
	// WebSocket swaps the base URL's scheme for ws (http) or wss (https).
	WebSocket bool
	// Absolute, when set, is the interface's URL as it is, whatever the
	// base URL (the Redis Streams carrier's advertised address); Path and
	// WebSocket are then ignored.
	Absolute string
}

// URL is the interface's URL under base (which ends with "/"), or its
// Absolute URL.
func (i Interface) URL(base string) string {
	if i.Absolute != "" {
		return i.Absolute
	}
	u := base + strings.TrimPrefix(i.Path, "/")
	if i.WebSocket {
		switch {
		case strings.HasPrefix(u, "https://"):
			u = "wss://" + strings.TrimPrefix(u, "https://")
		case strings.HasPrefix(u, "http://"):
			u = "ws://" + strings.TrimPrefix(u, "http://")
		}
	}
	return u
}

// addInterfaces appends rt.Interfaces to c's supportedInterfaces.
func addInterfaces(c *a2a.AgentCard, base string, rt Runtime) {
	for _, i := range rt.Interfaces {
		c.SupportedInterfaces = append(c.SupportedInterfaces, a2a.AgentInterface{
			URL: i.URL(base), ProtocolBinding: i.Binding, ProtocolVersion: a2a.ProtocolVersion, Tenant: rt.Tenant,
		})
	}
}
