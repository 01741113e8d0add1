package caddymodule

import (
	"fmt"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// unmarshalAuthBlock parses `auth { … }`; d is on the "auth" token.
func (h *AuthHandler) unmarshalAuthBlock(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	c := &h.Config
	options := newBlockOptions("auth", "principal")
	options.alias = map[string]string{"token": "bearer"}
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "bearer", "token":
			c.Token, err = oneArg(d)
		case "api_key":
			c.APIKey, err = oneArg(d)
		case "api_key_header":
			c.APIKeyHeader, err = oneArg(d)
		case "default_principal":
			c.DefaultPrincipal, err = oneArg(d)
		case "realm":
			c.Realm, err = oneArg(d)
		case "basic":
			var b *auth.Basic
			if b, err = basicArgs(d, "auth basic"); err == nil {
				c.Basic = b
			}
		case "no_env":
			if d.NextArg() {
				return d.ArgErr()
			}
			c.NoEnv = true
		case "principal":
			err = unmarshalPrincipal(d, c)
		case "jwt":
			err = unmarshalJWT(d, c)
		case "mtls":
			err = unmarshalMTLS(d, c) // AUTH-9
		default:
			return d.Errf("unknown auth option %q", opt)
		}
		return err
	}); err != nil {
		return err
	}
	return nil
}

// onceArg reads the one argument of a principal's credential into out,
// refusing a second one with "<what>: duplicate <name>".
func onceArg(d *caddyfile.Dispenser, out *string, what, name string) error {
	v, err := oneArg(d)
	if err != nil {
		return err
	}
	if *out != "" {
		return d.Errf("%s: duplicate %s", what, name)
	}
	*out = v
	return nil
}

func basicArgs(d *caddyfile.Dispenser, what string) (*auth.Basic, error) {
	args := d.RemainingArgs()
	switch len(args) {
	case 2:
		return &auth.Basic{Username: args[0], Password: args[1]}, nil
	case 1:
		return nil, d.Errf("%s: password (or bcrypt hash) required after username", what)
	default:
		return nil, d.ArgErr()
	}
}

func unmarshalPrincipal(d *caddyfile.Dispenser, c *auth.Config) error {
	var name, scheme string
	if !d.Args(&name, &scheme) {
		return d.Errf("principal: usage is principal <name> bearer|basic|api_key <secret...>")
	}
	i := slices.IndexFunc(c.Principals, func(p auth.Principal) bool { return p.Name == name })
	if i < 0 {
		c.Principals = append(c.Principals, auth.Principal{Name: name})
		i = len(c.Principals) - 1
	}
	p := &c.Principals[i]
	what := fmt.Sprintf("principal %q", name)
	switch scheme {
	case "bearer", "token":
		return onceArg(d, &p.Token, what, "bearer token")
	case "api_key":
		return onceArg(d, &p.APIKey, what, "api_key")
	case "basic":
		if p.Basic != nil {
			return d.Errf("%s: duplicate basic credential", what)
		}
		b, err := basicArgs(d, what+" basic")
		if err != nil {
			return err
		}
		p.Basic = b
	default:
		return d.Errf("%s: unknown scheme %q (want bearer, basic or api_key)", what, scheme)
	}
	return nil
}

// unmarshalJWT parses `jwt { … }` inside the auth block; d is on "jwt".
func unmarshalJWT(d *caddyfile.Dispenser, c *auth.Config) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	j := &auth.JWT{}
	options := newBlockOptions("auth jwt")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "secret":
			j.Secret, err = oneArg(d)
		case "secret_kid":
			j.SecretKID, err = oneArg(d)
		case "jwks_file":
			j.JWKSFile, err = oneArg(d)
		case "jwks_url":
			j.JWKSURL, err = oneArg(d)
		case "issuer":
			j.Issuer, err = oneArg(d)
		case "audience":
			j.Audience, err = oneArg(d)
		case "algorithms":
			j.Algorithms, err = restArgs(d)
		case "principal_claim":
			j.PrincipalClaim, err = oneArg(d)
		case "clock_skew":
			var v string
			if v, err = oneArg(d); err != nil {
				return err
			}
			dur, perr := caddy.ParseDuration(v)
			if perr != nil {
				return d.Errf("auth jwt clock_skew: invalid duration %q", v)
			}
			j.ClockSkew = auth.Duration(time.Duration(dur))
		default:
			if ok, err := unmarshalJWTOIDC(d, j, opt); ok { // AUTH-7
				return err
			}
			return d.Errf("auth jwt: unknown option %q", opt)
		}
		return err
	}); err != nil {
		return err
	}
	if j.Secret == "" && j.JWKSFile == "" && j.JWKSURL == "" && j.OIDCIssuer == "" {
		return d.Err("auth jwt: set secret, jwks_file, jwks_url or oidc_issuer")
	}
	c.JWT = j
	if err := validated(d, j.ValidateOIDC); err != nil {
		return err
	}
	return validated(d, j.ValidateClockSkew) // as AuthHandler.Validate
}
