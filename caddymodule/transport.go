package caddymodule

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
)

// loadTransport loads the http.transport module held in the TransportRaw
// field of backend (Caddy's reverse-proxy HTTP transport by default), for
// the backends that call an upstream.
func loadTransport(ctx caddy.Context, backend any, raw *json.RawMessage, name string) (http.RoundTripper, error) {
	if *raw == nil {
		*raw = json.RawMessage(`{"protocol":"http"}`)
	}
	mod, err := ctx.LoadModule(backend, "TransportRaw")
	if err != nil {
		return nil, fmt.Errorf("backend %s: loading transport: %w", name, err)
	}
	rt, ok := mod.(http.RoundTripper)
	if !ok {
		return nil, fmt.Errorf("backend %s: transport %T cannot send requests", name, mod)
	}
	return rt, nil
}
