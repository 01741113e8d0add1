package caddymodule

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backends"
)

// UpstreamOAuth2 is embedded in the backends that call an upstream over
// HTTP (a2a, http, openai): their upstream bearer token can come from an
// OAuth 2.0 provider (issue 30: OAuth to upstreams).
type UpstreamOAuth2 struct {
	// OAuth2, when set, gets the upstream's bearer token with the client
	// credentials grant (token_url, client_id, client_secret, scopes,
	// audience), cached until it expires, and sends it as
	// "Authorization: Bearer …" on every upstream request. Not together
	// with another Authorization credential (bearer, api_key, an
	// Authorization header).
	OAuth2 *backends.OAuth2 `json:"oauth2,omitempty"`
}

func (u *UpstreamOAuth2) upstreamOAuth2() *backends.OAuth2 { return u.OAuth2 }

// withUpstreamOAuth2 wraps rt with module's OAuth 2.0 client (when it
// has one), refusing a second Authorization credential.
func withUpstreamOAuth2(module any, rt http.RoundTripper, name string) (http.RoundTripper, error) {
	m, ok := module.(interface{ upstreamOAuth2() *backends.OAuth2 })
	if !ok || m.upstreamOAuth2() == nil {
		return rt, nil
	}
	if authorizationSet(module) {
		return nil, fmt.Errorf("backend %s: set oauth2 or another Authorization credential (bearer, api_key, an Authorization header), not both", name)
	}
	repl := caddy.NewReplacer()
	out, err := m.upstreamOAuth2().Transport(rt, func(s string) string { return repl.ReplaceKnown(s, "") })
	if err != nil {
		return nil, fmt.Errorf("backend %s: %w", name, err)
	}
	return out, nil
}

// authorizationSet reports whether module sends an Authorization
// credential of its own.
func authorizationSet(module any) bool {
	hasAuthz := func(h map[string][]string) bool {
		for k := range h {
			if strings.EqualFold(k, "Authorization") {
				return true
			}
		}
		return false
	}
	switch b := module.(type) {
	case *A2ABackend:
		return b.Bearer != "" || hasAuthz(b.Headers)
	case *HTTPBackend:
		return hasAuthz(b.Headers)
	case *OpenAIBackend:
		return b.APIKey != ""
	}
	return false
}

// unmarshalUpstreamOAuth2 parses, d on "oauth2":
//
//	oauth2 {
//		token_url <url>
//		client_id <id>
//		client_secret <secret>          # a placeholder: {env.X} or {file.path}
//		scopes <scope…>
//		audience <aud>
//		allow_private_networks <cidr…>
//	}
func unmarshalUpstreamOAuth2(d *caddyfile.Dispenser, out **backends.OAuth2) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	o := &backends.OAuth2{}
	options := newBlockOptions("oauth2")
	err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "token_url":
			o.TokenURL, err = oneArg(d)
		case "client_id":
			o.ClientID, err = oneArg(d)
		case "client_secret":
			o.ClientSecret, err = oneArg(d)
		case "scopes":
			o.Scopes, err = restArgs(d)
		case "audience":
			o.Audience, err = oneArg(d)
		case "allow_private_networks":
			o.AllowPrivateNetworks, err = restArgs(d)
		default:
			return d.Errf("oauth2: unknown option %q", opt)
		}
		return err
	})
	if err != nil {
		return err
	}
	*out = o
	return validated(d, o.Validate)
}
