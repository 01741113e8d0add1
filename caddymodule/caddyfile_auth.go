package caddymodule

import (
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// unmarshalSign parses `sign hs256|es256|eddsa { kid … secret|key_file … jku … }`
// inside the card block; d is on the "sign" token.
func (h *CardHandler) unmarshalSign(d *caddyfile.Dispenser) error {
	alg, err := oneArg(d)
	if err != nil {
		return err
	}
	alg = strings.ToLower(alg)
	if alg != "hs256" && alg != "es256" && alg != "eddsa" {
		return d.Errf("card sign: algorithm %q is not supported (hs256, es256 or eddsa)", alg)
	}
	k := jws.SignKey{Alg: alg}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return d.Errf("card sign: duplicate %s", opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "kid":
			k.KID, err = oneArg(d)
		case "secret":
			if alg != "hs256" {
				return d.Errf("card sign %s: secret is only for hs256 (use key_file)", alg)
			}
			k.Secret, err = oneArg(d)
		case "key_file":
			if alg == "hs256" {
				return d.Errf("card sign hs256: key_file is only for es256 and eddsa (use secret)")
			}
			k.KeyFile, err = oneArg(d)
		case "jku":
			k.JKU, err = oneArg(d)
		default:
			return d.Errf("card sign: unknown option %q", opt)
		}
		if err != nil {
			return err
		}
	}
	if k.KID == "" {
		return d.Err("card sign: kid is required")
	}
	if alg == "hs256" && k.Secret == "" {
		return d.Err("card sign hs256: secret is required")
	}
	if alg != "hs256" && k.KeyFile == "" {
		return d.Errf("card sign %s: key_file is required", alg)
	}
	for _, o := range h.Sign {
		if o.KID == k.KID {
			return d.Errf("card sign: duplicate kid %q", k.KID)
		}
	}
	h.Sign = append(h.Sign, k)
	return nil
}

// unmarshalJWT parses `jwt { … }` inside the auth block; d is on "jwt".
func unmarshalJWT(d *caddyfile.Dispenser, c *auth.Config) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	j := &auth.JWT{}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return d.Errf("auth jwt: duplicate %s", opt)
		}
		seen[opt] = true
		var err error
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
		case "clock_skew":
			var v string
			if v, err = oneArg(d); err != nil {
				return err
			}
			dur, perr := caddy.ParseDuration(v)
			if perr != nil || dur < 0 || dur > auth.MaxClockSkew {
				return d.Errf("auth jwt clock_skew: invalid duration %q (0 to %v)", v, auth.MaxClockSkew)
			}
			j.ClockSkew = auth.Duration(time.Duration(dur))
		default:
			return d.Errf("auth jwt: unknown option %q", opt)
		}
		if err != nil {
			return err
		}
	}
	if j.Secret == "" && j.JWKSFile == "" && j.JWKSURL == "" {
		return d.Err("auth jwt: set secret, jwks_file or jwks_url")
	}
	c.JWT = j
	return nil
}
