package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// loadTransport loads the http.transport module held in the TransportRaw
// field of module (Caddy's reverse-proxy HTTP transport by default), for
// the backends that call an upstream.
func loadTransport(ctx caddy.Context, module any, raw *json.RawMessage, name string) (http.RoundTripper, error) {
	if *raw == nil {
		*raw = json.RawMessage(`{"protocol":"http"}`)
	}
	mod, err := ctx.LoadModule(module, "TransportRaw")
	if err != nil {
		return nil, fmt.Errorf("backend %s: loading transport: %w", name, err)
	}
	rt, ok := mod.(http.RoundTripper)
	if !ok {
		return nil, fmt.Errorf("backend %s: transport %T cannot send requests", name, mod)
	}
	return rt, nil
}

// upstreamClient is an HTTP client over the transport loadTransport loads.
func upstreamClient(ctx caddy.Context, module any, raw *json.RawMessage, name string) (*http.Client, error) {
	rt, err := loadTransport(ctx, module, raw, name)
	if err != nil {
		return nil, err
	}
	if rt, err = withUpstreamOAuth2(module, rt, name); err != nil {
		return nil, err
	}
	return &http.Client{Transport: rt}, nil
}

// transportOption parses the Caddyfile option
//
//	transport <name> { <reverse_proxy transport options> }
//
// into raw, the TransportRaw field of a backend that calls an upstream.
func transportOption(d *caddyfile.Dispenser, raw *json.RawMessage) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	name := d.Val()
	unm, err := caddyfile.UnmarshalModule(d, "http.reverse_proxy.transport."+name)
	if err != nil {
		return err
	}
	*raw = caddyconfig.JSONModuleObject(unm, "protocol", name, nil)
	return nil
}

// builtBackend holds the backend a module builds at provision time; the
// module's Validate and RunTurn delegate to it.
type builtBackend struct {
	impl interface {
		backend.Backend
		Validate() error
	}
}

// Validate checks the configuration.
func (b *builtBackend) Validate() error { return b.impl.Validate() }

// runtimeBackend returns the built backend (see runtimeBackend); b itself
// before it is built.
func (b *builtBackend) runtimeBackend() backend.Backend {
	if b.impl == nil {
		return b
	}
	return b.impl
}

// RunTurn implements backend.Backend.
func (b *builtBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	return b.impl.RunTurn(ctx, req, emit)
}

// upstreamBlock parses the Caddyfile of a backend that calls an upstream:
//
//	backend <name> <url> {
//		transport <name> { … }
//		timeout <duration>
//		<the backend's own options>
//	}
//
// with exactly one URL and each option once (but repeatable); transport
// and timeout are handled here, every other option by the backend.
type upstreamBlock struct {
	name       string           // the backend's name, e.g. "http"
	urlWhat    string           // names the URL in errors, e.g. "upstream URL"
	url        *string          // receives the URL
	transport  *json.RawMessage // the backend's TransportRaw
	timeout    *caddy.Duration  // the backend's Timeout
	repeatable string           // an option that may be given more than once
}

// unmarshal reads the backend's directive and block; own parses the
// backend's other options (and answers the unknown ones).
func (u upstreamBlock) unmarshal(d *caddyfile.Dispenser, own func(opt string) error) error {
	d.Next() // the backend's name
	if !d.Args(u.url) || d.NextArg() {
		return d.Errf("backend %s: exactly one %s is required", u.name, u.urlWhat)
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		opt := d.Val()
		if opt != u.repeatable && seen[opt] {
			return d.Errf("backend %s: duplicate option %q", u.name, opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "transport":
			err = transportOption(d, u.transport)
		case "timeout":
			err = durationArg(d, u.timeout)
		default:
			err = own(opt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// headerArg reads `header <name> <value>` into h (repeatable: values add
// up under the canonical name).
func headerArg(d *caddyfile.Dispenser, h *map[string][]string) error {
	var k, v string
	if !d.Args(&k, &v) || d.NextArg() {
		return d.ArgErr()
	}
	if *h == nil {
		*h = map[string][]string{}
	}
	k = http.CanonicalHeaderKey(k)
	(*h)[k] = append((*h)[k], v)
	return nil
}

// resolveHeaders returns the configured upstream headers with their
// placeholders ({env.X}, {file.Y}) replaced.
func resolveHeaders(h map[string][]string, repl *caddy.Replacer) http.Header {
	out := http.Header{}
	for k, vs := range h {
		for _, v := range vs {
			out.Add(k, repl.ReplaceAll(v, ""))
		}
	}
	return out
}
