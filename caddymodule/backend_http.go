package caddymodule

import (
	"encoding/json"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
)

func init() {
	caddy.RegisterModule(HTTPBackend{})
}

// HTTPBackend posts each turn request (JSON) to an upstream agent service
// and reads the turn events from the response, as NDJSON or as SSE whose
// data lines hold the same objects (TURN-4). Canceling the turn aborts the
// request. Upstream 401/403 end the turn as an authentication failure;
// 408, 429, 5xx, timeouts and connection errors as a transient failure;
// the upstream body never reaches the client.
type HTTPBackend struct {
	// URL is the upstream endpoint (http or https). Supports {env.*}
	// placeholders. Required.
	URL string `json:"url,omitempty"`

	// Headers are added to every upstream request, e.g. a credential.
	// Values support {env.*} and {file.*} placeholders, resolved at
	// provision time.
	Headers map[string][]string `json:"headers,omitempty"`

	// TransportRaw configures the connection to the upstream with Caddy's
	// reverse-proxy transport module (http.reverse_proxy.transport.http:
	// TLS, timeouts, keep-alive, versions…). Default: {"protocol":"http"}
	// with Caddy's defaults.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	// Timeout bounds one turn (the whole exchange). Default: none.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// MaxLineSize bounds one event line, in bytes. Default: 16777216.
	MaxLineSize int `json:"max_line_size,omitempty"`

	// MaxOutputSize bounds one response body, in bytes. Default: 67108864.
	MaxOutputSize int64 `json:"max_output_size,omitempty"`

	UpstreamOAuth2

	builtBackend
}

// CaddyModule returns the Caddy module information.
func (HTTPBackend) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.backends.http",
		New: func() caddy.Module { return new(HTTPBackend) },
	}
}

// Provision loads the transport and builds the backend.
func (b *HTTPBackend) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	client, err := upstreamClient(ctx, b, &b.TransportRaw, "http")
	if err != nil {
		return err
	}
	hdr := resolveHeaders(b.Headers, repl)
	b.impl = &backends.HTTP{
		URL: repl.ReplaceAll(b.URL, ""), Client: client, Header: hdr,
		Timeout: time.Duration(b.Timeout), MaxLineBytes: b.MaxLineSize, MaxOutputBytes: b.MaxOutputSize,
	}
	return nil
}

// UnmarshalCaddyfile parses:
//
//	backend http <url> {
//		header <name> <value>
//		transport http {
//			<reverse_proxy http transport options>
//		}
//		timeout <duration>
//		max_line_size <size>
//		max_output_size <size>
//		oauth2 { token_url … client_id … client_secret … scopes … audience … }
//	}
func (b *HTTPBackend) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	u := upstreamBlock{name: "http", urlWhat: "upstream URL", url: &b.URL, transport: &b.TransportRaw, timeout: &b.Timeout, repeatable: "header"}
	return u.unmarshal(d, func(opt string) error {
		switch opt {
		case "header":
			return headerArg(d, &b.Headers)
		case "oauth2":
			return unmarshalUpstreamOAuth2(d, &b.OAuth2)
		case "max_line_size", "max_output_size":
			n, err := sizeArg(d)
			if err != nil {
				return err
			}
			if opt == "max_line_size" {
				b.MaxLineSize = int(n)
			} else {
				b.MaxOutputSize = n
			}
		default:
			return d.Errf("backend http: unknown option %q", opt)
		}
		return nil
	})
}

var (
	_ caddy.Provisioner     = (*HTTPBackend)(nil)
	_ caddy.Validator       = (*HTTPBackend)(nil)
	_ backend.Backend       = (*HTTPBackend)(nil)
	_ caddyfile.Unmarshaler = (*HTTPBackend)(nil)
)
