package caddymodule

import (
	"encoding/json"
	"errors"
	"slices"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
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

	// ownAuth: the block had an auth block of its own.
	ownAuth bool
	// agents are the agent blocks of an a2a block, in order (TURN-10).
	agents []*namedAgent
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
//				oidc_issuer <url>       # AUTH-7, with its options (caddyfile_auth_oidc.go)
//				oauth2 { … }            # AUTH-7: the card's OAuth 2.0 flows
//			}
//		}
//		<agent options…>
//	}
//
//	agent <name> {                  # TURN-10, repeatable: served under /<name>/
//		card { … }
//		auth { … }                  # default: the a2a block's
//		<agent options…>
//	}
//
// It expands into one route holding the a2a_health, a2a_card, a2a_auth and
// a2a handlers, in that order, so health and card stay public. Each agent
// block comes first as a route of its own (see agentRoutes), and the root
// route then serves the catalog (a2a_agents) after health.
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
	values, err := agentRoutes(h, hs, matcherSet) // TURN-10: before the root's
	if err != nil {
		return nil, err
	}
	mods := []caddyhttp.MiddlewareHandler{hs.health, hs.card, hs.auth, hs.agent}
	if c := hs.catalog(); c != nil {
		mods = slices.Insert(mods, 1, caddyhttp.MiddlewareHandler(c))
	}
	raws, err := handlersJSON(h, mods)
	if err != nil {
		return nil, err
	}
	route := caddyhttp.Route{HandlersRaw: raws}
	if matcherSet != nil {
		route.MatcherSetsRaw = []caddy.ModuleMap{matcherSet}
	}
	return append(values, httpcaddyfile.ConfigValue{Class: "route", Value: route}), nil
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
	hs := newA2AHandlers()
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	if err := hs.unmarshalBlock(d, "a2a", true); err != nil {
		return nil, err
	}
	if err := hs.finishAgents(d); err != nil { // TURN-10
		return nil, err
	}
	hs.finish()
	return hs, nil
}

// newA2AHandlers returns an empty handler set.
func newA2AHandlers() *a2aHandlers {
	return &a2aHandlers{
		health: new(HealthHandler),
		card:   new(CardHandler),
		auth:   new(AuthHandler),
		agent:  new(AgentHandler),
	}
}

// unmarshalBlock parses the body of an a2a block (block "a2a") or of an
// agent block inside it; only the a2a block may hold agent blocks.
func (hs *a2aHandlers) unmarshalBlock(d *caddyfile.Dispenser, block string, agents bool) error {
	blocks := &blockOptions{block: block, suffix: " block", seen: map[string]bool{}}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		switch sub {
		case "card", "auth":
			if err := blocks.once(d); err != nil {
				return err
			}
			var err error
			if sub == "card" {
				err = hs.card.unmarshalCardBlock(d)
			} else {
				err = hs.auth.unmarshalAuthBlock(d)
				hs.ownAuth = true
			}
			if err != nil {
				return err
			}
		case "agent":
			if !agents {
				return d.Errf("%s: agent blocks do not nest", block)
			}
			if err := hs.unmarshalAgent(d); err != nil {
				return err
			}
		default:
			handled, err := hs.agent.unmarshalOption(d)
			if err != nil {
				return err
			}
			if !handled {
				return d.Errf("unknown %s subdirective %q", block, sub)
			}
		}
	}
	if !blocks.seen["card"] {
		return d.Errf("%s: a card block with at least a name is required", block)
	}
	return validated(d, hs.agent.Validate) // the values: as for JSON configs
}

// finish attaches card and auth to the agent handler. The a2a_card handler
// gets no copy of the agent's facts: it derives them from the a2a and
// a2a_auth handlers of its route when it serves (card_facts.go).
func (hs *a2aHandlers) finish() {
	hs.agent.attach(hs.card, hs.auth)
}
