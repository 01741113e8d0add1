package caddymodule

import (
	"fmt"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// unmarshalCardBlock parses `card { … }`; d is on the "card" token.
func (h *CardHandler) unmarshalCardBlock(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	c := &h.Config
	options := newBlockOptions("card", "skill", "extension", "sign")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "name":
			c.Name, err = oneArg(d)
		case "description":
			c.Description, err = oneArg(d)
		case "version":
			c.Version, err = oneArg(d)
		case "documentation_url":
			c.DocumentationURL, err = oneArg(d)
		case "icon_url":
			c.IconURL, err = oneArg(d)
		case "public_url":
			c.PublicURL, err = oneArg(d)
		case "namespace":
			c.Namespace, err = oneArg(d)
		case "security_requirements_form":
			c.SecurityRequirementsForm, err = oneArg(d) // CARD-4; checked by c.Validate below
		case "artifact_extension":
			c.ArtifactExtensionURI, err = oneArg(d)
		case "thinking_extension":
			c.ThinkingExtensionURI, err = oneArg(d)
		case "input_modes":
			c.InputModes, err = restArgs(d)
		case "output_modes":
			c.OutputModes, err = restArgs(d)
		case "provider":
			var org, u string
			if !d.Args(&org, &u) || d.NextArg() {
				return d.ArgErr()
			}
			c.Provider = &card.Provider{Organization: org, URL: u}
		case "max_age":
			var v string
			if v, err = oneArg(d); err != nil {
				return err
			}
			dur, perr := caddy.ParseDuration(v)
			if perr != nil || dur < 0 {
				return d.Errf("card max_age: invalid duration %q", v)
			}
			md := caddy.Duration(dur)
			h.MaxAge = &md
		case "sign":
			err = h.unmarshalSign(d)
		case "jwks_path":
			h.JWKSPath, err = oneArg(d)
		case "extension":
			err = unmarshalExtension(d, c)
		case "skill":
			err = unmarshalSkill(d, c)
		default:
			return d.Errf("unknown card option %q", opt)
		}
		return err
	}); err != nil {
		return err
	}
	return validated(d, c.Validate) // the card's rules, as for JSON configs
}

func unmarshalExtension(d *caddyfile.Dispenser, c *card.Config) error {
	args := d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "required") {
		return d.ArgErr()
	}
	e := card.Extension{URI: args[0], Required: len(args) == 2}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		switch d.Val() {
		case "description":
			v, err := oneArg(d)
			if err != nil {
				return err
			}
			e.Description = v
		case "param":
			var k, v string
			if !d.Args(&k, &v) || d.NextArg() {
				return d.ArgErr()
			}
			if e.Params == nil {
				e.Params = map[string]any{}
			}
			e.Params[k] = v
		default:
			return d.Errf("unknown extension option %q", d.Val())
		}
	}
	c.Extensions = append(c.Extensions, e)
	return nil
}

func unmarshalSkill(d *caddyfile.Dispenser, c *card.Config) error {
	id, err := oneArg(d)
	if err != nil {
		return err
	}
	s := card.Skill{ID: id}
	options := newBlockOptions(fmt.Sprintf("skill %q", id), "example")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "name":
			s.Name, err = oneArg(d)
		case "description":
			s.Description, err = oneArg(d)
		case "tags":
			s.Tags, err = restArgs(d)
		case "example":
			var v string
			v, err = oneArg(d)
			s.Examples = append(s.Examples, v)
		case "input_modes":
			s.InputModes, err = restArgs(d)
		case "output_modes":
			s.OutputModes, err = restArgs(d)
		case "requires_scopes":
			s.RequiresScopes, err = restArgs(d) // AUTH-8
		default:
			return d.Errf("skill %q: unknown option %q", id, opt)
		}
		return err
	}); err != nil {
		return err
	}
	c.Skills = append(c.Skills, s)
	return nil
}

// unmarshalSign parses `sign hs256|es256|eddsa { kid … secret|key_file … jku … }`
// inside the card block; d is on the "sign" token.
func (h *CardHandler) unmarshalSign(d *caddyfile.Dispenser) error {
	alg, err := oneArg(d)
	if err != nil {
		return err
	}
	k := jws.SignKey{Alg: strings.ToLower(alg)} // the values: jws.CheckSignKeys
	options := newBlockOptions("card sign")
	if err := options.each(d, func(opt string) (err error) {
		switch opt {
		case "kid":
			k.KID, err = oneArg(d)
		case "secret":
			k.Secret, err = oneArg(d)
		case "key_file":
			k.KeyFile, err = oneArg(d)
		case "jku":
			k.JKU, err = oneArg(d)
		default:
			return d.Errf("card sign: unknown option %q", opt)
		}
		return err
	}); err != nil {
		return err
	}
	h.Sign = append(h.Sign, k)
	return validated(d, func() error { return jws.CheckSignKeys("card sign", h.Sign) })
}
