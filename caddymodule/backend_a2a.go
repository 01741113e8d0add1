package caddymodule

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
	"github.com/caddy-a2a/caddy-a2a/client"
)

func init() {
	caddy.RegisterModule(A2ABackend{})
}

// A2ABackend fronts an existing A2A agent (TURN-9): it discovers the
// upstream card (A2A 1.0, or 0.3 translated), forwards each turn with its
// own upstream credentials, streams when the upstream streams, keeps the
// upstream task and context ids with the gateway's context (so follow-ups
// and cancels reach the right upstream task, across restarts), relays
// status, message and artifact events and forwards CancelTask. The
// gateway's auth, durable tasks, ListTasks, push and signed card apply on
// top. Upstream failures follow TURN-8.
type A2ABackend struct {
	// URL is the upstream agent's base URL (its card at
	// /.well-known/agent-card.json) or card URL. Supports {env.*}
	// placeholders. Required.
	URL string `json:"url,omitempty"`

	// Headers are added to every upstream request (upstream credentials).
	// Values support {env.*} and {file.*} placeholders.
	Headers map[string][]string `json:"headers,omitempty"`

	// Bearer is sent as "Authorization: Bearer <token>" upstream. Supports
	// placeholders.
	Bearer string `json:"bearer,omitempty"`

	// TransportRaw configures the connection to the upstream with Caddy's
	// reverse-proxy HTTP transport (TLS, timeouts, …). Default:
	// {"protocol":"http"}.
	TransportRaw json.RawMessage `json:"transport,omitempty" caddy:"namespace=http.reverse_proxy.transport inline_key=protocol"`

	// Timeout bounds one turn. Default: none.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// CardTTL is how long a discovered upstream card is reused. Default 5m.
	CardTTL caddy.Duration `json:"card_ttl,omitempty"`

	// VerifyUpstreamCard, when set, names the keys the upstream card's
	// signature must verify with; a turn is refused while it does not.
	VerifyUpstreamCard *UpstreamCardKeys `json:"verify_upstream_card,omitempty"`

	UpstreamOAuth2

	builtBackend
}

// UpstreamCardKeys are the keys an upstream card's signature is checked
// with (the vocabulary of `caddy a2a card verify`).
type UpstreamCardKeys struct {
	// KeyFiles are "[KID=]FILE": PEM public keys or JWKS files.
	KeyFiles []string `json:"key_files,omitempty"`
	// JWKSURLs are remote JWKS URLs.
	JWKSURLs []string `json:"jwks_urls,omitempty"`
	// AllowJKU lists origins whose jku URLs may be fetched.
	AllowJKU []string `json:"allow_jku,omitempty"`
	// HS256 maps a kid to a shared secret (placeholders supported).
	HS256 map[string]string `json:"hs256,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (A2ABackend) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.backends.a2a",
		New: func() caddy.Module { return new(A2ABackend) },
	}
}

// Provision loads the transport and builds the backend.
func (b *A2ABackend) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	hc, err := upstreamClient(ctx, b, &b.TransportRaw, "a2a")
	if err != nil {
		return err
	}
	hdr := resolveHeaders(b.Headers, repl)
	if b.Bearer != "" {
		hdr.Set("Authorization", "Bearer "+repl.ReplaceAll(b.Bearer, ""))
	}
	impl := &backends.A2A{URL: repl.ReplaceAll(b.URL, ""), Client: hc, Header: hdr,
		Timeout: time.Duration(b.Timeout), CardTTL: time.Duration(b.CardTTL)}
	if k := b.VerifyUpstreamCard; k != nil {
		t := client.Trust{KeyFiles: k.KeyFiles, JWKSURLs: k.JWKSURLs, AllowJKU: k.AllowJKU}
		for kid, secret := range k.HS256 {
			t.HS256 = append(t.HS256, client.HS256Secret{KID: kid, Secret: []byte(repl.ReplaceAll(secret, ""))})
		}
		impl.Trust = &t
	}
	b.impl = impl
	return nil
}

// Validate checks the configuration.
func (b *A2ABackend) Validate() error {
	if err := b.builtBackend.Validate(); err != nil {
		return err
	}
	if k := b.VerifyUpstreamCard; k != nil && len(k.KeyFiles)+len(k.JWKSURLs)+len(k.AllowJKU)+len(k.HS256) == 0 {
		return errString("backend a2a: verify_upstream_card needs at least one key")
	}
	return nil
}

// UnmarshalCaddyfile parses:
//
//	backend a2a <url> {
//		header <name> <value>
//		bearer <token>
//		transport http { <reverse_proxy http transport options> }
//		timeout <duration>
//		card_ttl <duration>
//		oauth2 { token_url … client_id … client_secret … scopes … audience … }
//		verify_upstream_card [<key file or JWKS URL>…] {
//			key_file [<kid>=]<file>
//			jwks_url <url>
//			allow_jku <origin>
//			hs256 <kid> <secret>
//		}
//	}
func (b *A2ABackend) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	u := upstreamBlock{name: "a2a", urlWhat: "upstream agent URL", url: &b.URL, transport: &b.TransportRaw, timeout: &b.Timeout, repeatable: "header"}
	return u.unmarshal(d, func(opt string) error {
		switch opt {
		case "header":
			return headerArg(d, &b.Headers)
		case "bearer":
			return stringArg(d, &b.Bearer)
		case "card_ttl":
			return durationArg(d, &b.CardTTL)
		case "verify_upstream_card":
			return b.unmarshalVerify(d)
		case "oauth2":
			return unmarshalUpstreamOAuth2(d, &b.OAuth2)
		default:
			return d.Errf("backend a2a: unknown option %q", opt)
		}
	})
}

// unmarshalVerify parses verify_upstream_card.
func (b *A2ABackend) unmarshalVerify(d *caddyfile.Dispenser) error {
	k := &UpstreamCardKeys{}
	for _, arg := range d.RemainingArgs() {
		if strings.HasPrefix(arg, "https://") || strings.HasPrefix(arg, "http://") {
			k.JWKSURLs = append(k.JWKSURLs, arg)
		} else {
			k.KeyFiles = append(k.KeyFiles, arg)
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "key_file", "jwks_url", "allow_jku":
			opt := d.Val()
			var v string
			if !d.Args(&v) || d.NextArg() {
				return d.ArgErr()
			}
			switch opt {
			case "key_file":
				k.KeyFiles = append(k.KeyFiles, v)
			case "jwks_url":
				k.JWKSURLs = append(k.JWKSURLs, v)
			default:
				k.AllowJKU = append(k.AllowJKU, v)
			}
		case "hs256":
			var kid, secret string
			if !d.Args(&kid, &secret) || d.NextArg() {
				return d.ArgErr()
			}
			if k.HS256 == nil {
				k.HS256 = map[string]string{}
			}
			k.HS256[kid] = secret
		default:
			return d.Errf("backend a2a: verify_upstream_card: unknown option %q", d.Val())
		}
	}
	b.VerifyUpstreamCard = k
	return nil
}

// errString is a constant error message.
type errString string

func (e errString) Error() string { return string(e) }

var (
	_ caddy.Provisioner     = (*A2ABackend)(nil)
	_ caddy.Validator       = (*A2ABackend)(nil)
	_ backend.Backend       = (*A2ABackend)(nil)
	_ caddyfile.Unmarshaler = (*A2ABackend)(nil)
)
