package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

func init() {
	httpcaddyfile.RegisterDirective("a2a", parseA2A)
	httpcaddyfile.RegisterDirectiveOrder("a2a", httpcaddyfile.Before, "respond")
}

// a2aHandlers are the handlers one a2a directive expands into, in route
// order.
type a2aHandlers struct {
	health *HealthHandler
	card   *CardHandler
	auth   *AuthHandler
	agent  *AgentHandler
}

// parseA2A parses the a2a directive:
//
//	a2a [<matcher>] {
//		card {
//			name <name>
//			description <text>
//			version <version>
//			provider <organization> <url>
//			documentation_url <url>
//			icon_url <url>
//			public_url <url>
//			max_age <duration>
//			namespace <identifier>
//			input_modes <media-type...>
//			output_modes <media-type...>
//			artifact_extension <uri>
//			thinking_extension <uri>
//			extension <uri> [required] {
//				description <text>
//				param <key> <value>
//			}
//			sign hs256 {
//				kid <kid>
//				secret <secret>        # e.g. {env.CARD_SIGNING_SECRET}
//				jku <url>
//			}
//			sign es256|eddsa {
//				kid <kid>
//				key_file <pem-path>
//				jku <url>
//			}
//			jwks_path <path>
//			skill <id> {
//				name <name>
//				description <text>
//				tags <tag...>
//				example <text>
//				input_modes <media-type...>
//				output_modes <media-type...>
//			}
//		}
//		auth {
//			bearer|token <token>
//			basic <username> <password|bcrypt-hash>
//			api_key <key>
//			api_key_header <header>
//			principal <name> bearer|token|basic|api_key <secret...>
//			default_principal <name>
//			realm <realm>
//			no_env
//			jwt {
//				secret <hs256-secret>
//				secret_kid <kid>
//				jwks_file <path>
//				jwks_url <url>
//				issuer <iss>
//				audience <aud>
//				algorithms <alg...>
//				clock_skew <duration>
//			}
//		}
//		<agent options…>
//	}
//
// It expands into one route holding the a2a_health, a2a_card, a2a_auth and
// a2a handlers, in that order, so health and card stay public.
func parseA2A(h httpcaddyfile.Helper) ([]httpcaddyfile.ConfigValue, error) {
	h.Next() // directive name
	matcherSet, err := h.ExtractMatcherSet()
	if err != nil {
		return nil, err
	}
	h.Next() // directive name again: ExtractMatcherSet resets the dispenser
	hs, err := unmarshalA2A(h.Dispenser)
	if err != nil {
		return nil, err
	}
	var raws []json.RawMessage
	for _, mod := range []caddyhttp.MiddlewareHandler{hs.health, hs.card, hs.auth, hs.agent} {
		raw, err := handlerJSON(mod)
		if err != nil {
			return nil, h.Errf("encoding a2a handler: %v", err)
		}
		raws = append(raws, raw)
	}
	route := caddyhttp.Route{HandlersRaw: raws}
	if matcherSet != nil {
		route.MatcherSetsRaw = []caddy.ModuleMap{matcherSet}
	}
	return []httpcaddyfile.ConfigValue{{Class: "route", Value: route}}, nil
}

// handlerJSON encodes a handler with its "handler" name field.
func handlerJSON(mod caddyhttp.MiddlewareHandler) (json.RawMessage, error) {
	m, ok := mod.(caddy.Module)
	if !ok {
		return nil, errors.New("not a caddy module")
	}
	var warns []caddyconfig.Warning
	raw := caddyconfig.JSONModuleObject(mod, "handler", m.CaddyModule().ID.Name(), &warns)
	if len(warns) > 0 {
		return nil, errors.New(warns[0].Message)
	}
	return raw, nil
}

// unmarshalA2A parses the a2a block; d is positioned after the directive
// name and matcher.
func unmarshalA2A(d *caddyfile.Dispenser) (*a2aHandlers, error) {
	hs := &a2aHandlers{
		health: new(HealthHandler),
		card:   new(CardHandler),
		auth:   new(AuthHandler),
		agent:  new(AgentHandler),
	}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		switch sub {
		case "card", "auth":
			if seen[sub] {
				return nil, d.Errf("a2a: duplicate %s block", sub)
			}
			seen[sub] = true
			var err error
			if sub == "card" {
				err = hs.card.unmarshalCardBlock(d)
			} else {
				err = hs.auth.unmarshalAuthBlock(d)
			}
			if err != nil {
				return nil, err
			}
		default:
			handled, err := hs.agent.unmarshalOption(d)
			if err != nil {
				return nil, err
			}
			if !handled {
				return nil, d.Errf("unknown a2a subdirective %q", sub)
			}
		}
	}
	if !seen["card"] {
		return nil, d.Err("a2a: a card block with at least a name is required")
	}
	s := hs.auth.Config.Schemes(nil)
	hs.card.Security = &card.Security{
		Bearer: s.Bearer, Basic: s.Basic, APIKey: s.APIKey,
		APIKeyHeader: hs.auth.APIKeyHeader,
		JWT:          s.JWT,
		FromEnv:      !hs.auth.NoEnv,
	}
	if *hs.card.Security == (card.Security{}) {
		hs.card.Security = nil
	}
	hs.agent.attach(hs.card, hs.auth)
	return hs, nil
}

// oneArg reads exactly one argument for the current subdirective.
func oneArg(d *caddyfile.Dispenser) (string, error) {
	var v string
	if !d.Args(&v) || d.NextArg() {
		return "", d.ArgErr()
	}
	return v, nil
}

// restArgs reads one or more arguments.
func restArgs(d *caddyfile.Dispenser) ([]string, error) {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return nil, d.ArgErr()
	}
	return args, nil
}

// unmarshalCardBlock parses `card { … }`; d is on the "card" token.
func (h *CardHandler) unmarshalCardBlock(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	c := &h.Config
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		repeatable := opt == "skill" || opt == "extension" || opt == "sign"
		if !repeatable && seen[opt] {
			return d.Errf("card: duplicate %s", opt)
		}
		seen[opt] = true
		var err error
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
		if err != nil {
			return err
		}
	}
	if err := c.Validate(); err != nil {
		return d.Errf("invalid card: %v", err)
	}
	return nil
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
	if slices.ContainsFunc(c.Extensions, func(x card.Extension) bool { return x.URI == e.URI }) {
		return d.Errf("card: duplicate extension %q", e.URI)
	}
	c.Extensions = append(c.Extensions, e)
	return nil
}

func unmarshalSkill(d *caddyfile.Dispenser, c *card.Config) error {
	id, err := oneArg(d)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(c.Skills, func(s card.Skill) bool { return s.ID == id }) {
		return d.Errf("card: duplicate skill %q", id)
	}
	s := card.Skill{ID: id}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if opt != "example" && seen[opt] {
			return d.Errf("skill %q: duplicate %s", id, opt)
		}
		seen[opt] = true
		var err error
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
		default:
			return d.Errf("skill %q: unknown option %q", id, opt)
		}
		if err != nil {
			return err
		}
	}
	c.Skills = append(c.Skills, s)
	return nil
}

// unmarshalAuthBlock parses `auth { … }`; d is on the "auth" token.
func (h *AuthHandler) unmarshalAuthBlock(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	c := &h.Config
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		key := opt
		if opt == "token" {
			key = "bearer"
		}
		if opt != "principal" && seen[key] {
			return d.Errf("auth: duplicate %s", opt)
		}
		seen[key] = true
		var err error
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
		default:
			return d.Errf("unknown auth option %q", opt)
		}
		if err != nil {
			return err
		}
	}
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
		v, err := oneArg(d)
		if err != nil {
			return err
		}
		if p.Token != "" {
			return d.Errf("%s: duplicate bearer token", what)
		}
		p.Token = v
	case "api_key":
		v, err := oneArg(d)
		if err != nil {
			return err
		}
		if p.APIKey != "" {
			return d.Errf("%s: duplicate api_key", what)
		}
		p.APIKey = v
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
