package caddymodule

import (
	"fmt"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/ws"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// WebSocketConfig turns the WebSocket JSON-RPC binding on (XPORT-3): the
// a2a handler accepts the upgrade on Path, after a2a_auth authenticated
// the upgrade request, and the card advertises the binding websocket at
// ws[s]://<base>/<path>.
type WebSocketConfig struct {
	// Path is the upgrade path. Default: /ws.
	Path string `json:"path,omitempty"`

	// MaxInFlight bounds the requests running at once on one connection
	// (unary calls and open streams); one more is answered with a -32600
	// error frame. Default: 32.
	MaxInFlight int `json:"max_in_flight,omitempty"`

	// MaxMessageBytes bounds one incoming message, in bytes; a larger one
	// closes the connection with status 1009. Default: 4194304 (4 MiB),
	// or max_body_size when that is smaller.
	MaxMessageBytes int64 `json:"max_message_bytes,omitempty"`

	// Origins are host patterns (e.g. app.example.com, *.example.com) of
	// browser pages allowed to connect besides the site itself; clients
	// that send no Origin header are always allowed. Default: none.
	Origins []string `json:"origins,omitempty"`
}

// path is the effective upgrade path.
func (c *WebSocketConfig) path() string {
	if c.Path == "" {
		return ws.DefaultPath
	}
	return c.Path
}

// validate checks the options (nil: the binding is off).
func (c *WebSocketConfig) validate() error {
	if c == nil {
		return nil
	}
	if p := c.path(); !strings.HasPrefix(p, "/") || p == "/" || strings.HasPrefix(p, "/artifacts/") {
		return fmt.Errorf("websocket: path must start with / and not be / or under /artifacts/, not %q", p)
	}
	if err := notNegative("websocket: max_in_flight", int64(c.MaxInFlight)); err != nil {
		return err
	}
	return notNegative("websocket: max_message_bytes", c.MaxMessageBytes)
}

// unmarshalWebSocket parses the websocket option of the a2a block:
//
//	websocket [<path>] {
//		max_in_flight <n>
//		max_message_bytes <size>
//		origins <host-pattern…>
//	}
func unmarshalWebSocket(d *caddyfile.Dispenser) (*WebSocketConfig, error) {
	c := new(WebSocketConfig)
	if d.NextArg() {
		c.Path = d.Val()
	}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "max_in_flight":
			n, err := countArg(d, "websocket: max_in_flight")
			if err != nil {
				return nil, err
			}
			c.MaxInFlight = n
		case "max_message_bytes":
			n, err := sizeArg(d)
			if err != nil {
				return nil, err
			}
			c.MaxMessageBytes = n
		case "origins":
			c.Origins = d.RemainingArgs()
			if len(c.Origins) == 0 {
				return nil, d.ArgErr()
			}
		default:
			return nil, d.Errf("unknown websocket option %q", d.Val())
		}
	}
	return c, validated(d, c.validate)
}

// wireWebSocket builds the WebSocket binding of the handler's dispatcher
// when it is on.
func (h *AgentHandler) wireWebSocket(app *App, tc httpx.TransportConfig) {
	if h.WebSocket == nil {
		return
	}
	h.ws = ws.New(h.handler.Dispatcher(), tc, ws.Config{
		Path:            h.WebSocket.path(),
		MaxInFlight:     h.WebSocket.MaxInFlight,
		MaxMessageBytes: h.WebSocket.MaxMessageBytes,
		KeepAlive:       time.Duration(h.KeepAlive),
		OriginPatterns:  h.WebSocket.Origins,
		Tenants:         app.tenantsOf(h), // TURN-10
	})
}

// wsInterface is the card interface of the WebSocket binding at path
// (none when path is empty).
func wsInterface(path string) []card.Interface {
	if path == "" {
		return nil
	}
	return []card.Interface{{Binding: a2a.BindingWebSocket, Path: path, WebSocket: true}}
}
