// Package ws is the WebSocket JSON-RPC binding of an agent.Service
// (XPORT-3): a client upgrades on the configured path (authenticated like
// any other request, before the upgrade) and then sends JSON-RPC requests
// in frames of the internal/wsframe format; many may be in flight on one
// connection. Each request runs through the shared jsonrpc.Dispatcher, so
// methods, errors, version and extension rules and metrics are those of
// the HTTP JSON-RPC binding (counted under the binding label websocket).
package ws

import (
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"

	"time"
)

// Defaults of Config.
const (
	// DefaultPath is the upgrade path.
	DefaultPath = "/ws"
	// DefaultMaxInFlight bounds the requests in flight on one connection.
	DefaultMaxInFlight = 32
	// DefaultMaxMessageBytes bounds one incoming message (4 MiB).
	DefaultMaxMessageBytes = 4 << 20
	// DefaultWriteTimeout bounds writing one frame.
	DefaultWriteTimeout = 30 * time.Second
)

// Config is the settings of the WebSocket binding. Zero values take the
// defaults (see WithDefaults).
type Config struct {
	// Path is the request path the upgrade is accepted on. Default /ws.
	Path string
	// MaxInFlight bounds the requests (unary calls and open streams) one
	// connection has running at once; a request beyond it is answered
	// with a -32600 error frame and not run. Default 32.
	MaxInFlight int
	// MaxMessageBytes bounds one incoming message; a larger one closes the
	// connection with status 1009 (message too big). Default 4 MiB, but
	// never more than the transport's body limit (a frame carries no more
	// than a POST could).
	MaxMessageBytes int64
	// KeepAlive is the interval of WebSocket pings; a connection whose
	// peer does not answer a ping within it is closed. Default: the
	// transport's keep-alive interval (15s).
	KeepAlive time.Duration
	// WriteTimeout bounds writing one frame; a client that does not read
	// for that long is disconnected. Default 30s.
	WriteTimeout time.Duration
	// OriginPatterns are the host patterns (path.Match syntax, e.g.
	// "*.example.com") of browser origins allowed besides the request's
	// own host. Requests without an Origin header (non-browser clients)
	// are always allowed. Default: none (same origin only).
	OriginPatterns []string
	// Tenants, when set, serves a frame whose params name the tenant of
	// another agent of the site with that agent (TURN-10, see
	// jsonrpc.Tenants). Nil: frames are served by this binding's service.
	Tenants jsonrpc.Tenants
}

// WithDefaults returns c with every zero field set to its default;
// keepAlive and maxBody are the transport's keep-alive interval and body
// limit.
func (c Config) WithDefaults(keepAlive time.Duration, maxBody int64) Config {
	if c.Path == "" {
		c.Path = DefaultPath
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = DefaultMaxMessageBytes
		if maxBody > 0 && maxBody < c.MaxMessageBytes {
			c.MaxMessageBytes = maxBody
		}
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = keepAlive
	}
	if c.KeepAlive <= 0 {
		c.KeepAlive = 15 * time.Second
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	return c
}
