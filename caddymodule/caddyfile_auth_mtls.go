package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// unmarshalMTLS parses the mtls block of auth (AUTH-9), which maps the
// client certificate the site's `tls { client_auth { mode
// require_and_verify; trust_pool … } }` verified to a principal:
//
//	mtls {
//		principal_from san_uri|san_dns|email|cn
//		principal <name> <identity>
//		require_with_bearer
//	}
//
// Without principal lines the identity itself is the principal name.
// require_with_bearer makes the certificate a second factor: requests then
// need a bearer credential too, whose principal they act as.
func unmarshalMTLS(d *caddyfile.Dispenser, c *auth.Config) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	if c.MTLS != nil {
		return d.Err("auth: duplicate mtls block")
	}
	m := &auth.MTLS{}
	options := newBlockOptions("auth mtls", "principal")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "principal_from":
			m.PrincipalFrom, err = oneArg(d)
		case "require_with_bearer":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.RequireWithBearer = true
		case "principal":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.Err("auth mtls principal: want a name and a certificate identity")
			}
			m.Principals = append(m.Principals, auth.MTLSPrincipal{Name: args[0], Identity: args[1]})
		default:
			return d.Errf("unknown auth mtls option %q", opt)
		}
		return err
	}); err != nil {
		return err
	}
	c.MTLS = m
	return nil
}
