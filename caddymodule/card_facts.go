package caddymodule

import (
	"cmp"
	"slices"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Card facts (issue 27 item 6): what a card says about the agent serving
// it is derived from that agent's a2a handler and the a2a_auth in front of
// it, never copied. The a2a handler's own card (its `card` field, for the
// extended card) takes them from its handler when it is provisioned
// (provisionFor); an a2a_card handler, provisioned before the a2a handler
// of its route, finds that handler in the http app's routes when it serves
// its first request (cardAgent) and builds its card then. Each config
// generation has handlers of its own, so a reload derives anew. A fact set
// on the card itself (the JSON fields security, push_notifications, …)
// overrides the derived one (card.Facts.Or).

// cardFacts are the facts the card of h says about h: push and its signing
// keys, thinking exposure, the 0.3 dual card, resumable streams, idempotent
// sends and the gRPC and WebSocket bindings. The auth schemes are the
// a2a_auth handler's (securityOf).
func (h *AgentHandler) cardFacts() card.Facts {
	f := card.Facts{
		LegacyV03:    h.LegacyV03,                                       // the dual card (RPC-2)
		EventLogSize: cmp.Or(h.EventLogSize, store.DefaultEventLogSize), // RPC-17
	}
	if h.Push != nil {
		f.PushNotifications = true // PUSH-1
		f.PushSign = h.Push.Sign   // published in the JWKS (PUSH-8)
	}
	if h.WebSocket != nil {
		f.WebSocketPath = h.WebSocket.path() // XPORT-3
	}
	if h.RedisRPC != nil {
		f.RedisStreamsURL = h.RedisRPC.AdvertiseURL // XPORT-5, only when configured
	}
	if h.ThinkingExposure == nil {
		f.ThinkingTypes = []string{"tool_trace"}
	} else if len(*h.ThinkingExposure) > 0 {
		f.ThinkingTypes = slices.Clone(*h.ThinkingExposure)
	}
	if h.GRPC || h.GRPCJSONRPC {
		f.Bindings = h.bindings()       // XPORT-2, XPORT-6: only when enabled
		f.GRPCPort = h.grpcListenPort() // issue 29
	}
	if h.DedupeWindow >= 0 { // RPC-18, unless dedupe_window is off
		f.DedupeWindow = cmp.Or(time.Duration(h.DedupeWindow), agent.DefaultDedupeWindow)
		f.DedupeAlways = h.Dedupe == "always"
	}
	return f
}

// securityOf declares the schemes of the auth handler a (nil: no auth)
// for a card: never a credential.
func securityOf(a *AuthHandler) *card.Security {
	if a == nil {
		return nil
	}
	s := a.Config.Schemes(nil)
	sec := &card.Security{
		Bearer: s.Bearer, Basic: s.Basic, APIKey: s.APIKey,
		APIKeyHeader:   a.APIKeyHeader,
		JWT:            s.JWT,
		MTLS:           s.MTLS, // AUTH-9
		MTLSWithBearer: s.MTLSWithBearer,
		FromEnv:        !a.NoEnv,
	}
	if a.JWT != nil { // AUTH-7: the identity provider of the bearer JWTs
		sec.OpenIDConnectURL, sec.OAuth2 = a.JWT.OpenIDConnectURL(), a.JWT.OIDC.OAuth2
	}
	if *sec == (card.Security{}) {
		return nil
	}
	return sec
}

// explicitFacts are the facts set on the card itself.
func (h *CardHandler) explicitFacts() card.Facts {
	return card.Facts{
		Security:          h.Security,
		PushNotifications: h.PushNotifications,
		ThinkingTypes:     h.ThinkingTypes,
		LegacyV03:         h.LegacyV03,
		EventLogSize:      h.EventLogSize,
		DedupeWindow:      time.Duration(h.DedupeWindow),
		DedupeAlways:      h.DedupeAlways,
		Bindings:          h.Bindings,
		GRPCPort:          h.GRPCPort,
		WebSocketPath:     h.WebSocketPath,
		RedisStreamsURL:   h.RedisStreamsURL,
		PushSign:          h.PushSign,
	}
}

// setFacts sets the card's fact fields to f.
func (h *CardHandler) setFacts(f card.Facts) {
	h.Security, h.PushNotifications, h.ThinkingTypes = f.Security, f.PushNotifications, f.ThinkingTypes
	h.LegacyV03, h.EventLogSize = f.LegacyV03, f.EventLogSize
	h.DedupeWindow, h.DedupeAlways = caddy.Duration(f.DedupeWindow), f.DedupeAlways
	h.Bindings, h.WebSocketPath, h.PushSign = f.Bindings, f.WebSocketPath, f.PushSign
	h.RedisStreamsURL, h.GRPCPort = f.RedisStreamsURL, f.GRPCPort
}

// provisionFor provisions the card of agent handler a (its `card` field):
// the facts it does not set are a's, and its handler is built at once.
func (h *CardHandler) provisionFor(ctx caddy.Context, a *AgentHandler) error {
	h.setFacts(h.explicitFacts().Or(a.cardFacts()))
	h.eager = true
	return h.Provision(ctx)
}

// derivedFacts are the facts of the a2a handler the card handler fronts
// (cardAgent) with the schemes of the a2a_auth before it; none for a card
// without an a2a handler, or whose a2a handler serves another path prefix
// (the card then says only what it sets).
func (h *CardHandler) derivedFacts(ctx caddy.Context) card.Facts {
	a, auth := cardAgent(httpRoutes(ctx), h)
	if a == nil {
		return card.Facts{}
	}
	prefix := ""
	if a.Card != nil {
		prefix = a.Card.PathPrefix
	}
	if prefix != h.PathPrefix {
		h.logger.Warn("a2a_card: the a2a handler after it serves another path_prefix; its facts are not advertised",
			zap.String("card_path_prefix", h.PathPrefix), zap.String("a2a_path_prefix", prefix))
		return card.Facts{}
	}
	f := a.cardFacts()
	f.Security = securityOf(auth)
	return f
}

// httpRoutes are the route lists of the http app's servers, in server name
// order (none without the http app).
func httpRoutes(ctx caddy.Context) []caddyhttp.RouteList {
	httpApp, err := ctx.AppIfConfigured("http")
	if err != nil {
		return nil
	}
	app, ok := httpApp.(*caddyhttp.App)
	if !ok {
		return nil
	}
	var lists []caddyhttp.RouteList
	for _, name := range sortedServerNames(app) {
		lists = append(lists, app.Servers[name].Routes)
	}
	return lists
}

// cardAgent finds the a2a handler that card c fronts: the first one after
// c in route order, in c's route, a later route of the same list or a
// subroute of them, unless another a2a_card comes first; and the a2a_auth
// in front of that handler in its route (as agentAuth finds it). Nil when
// there is none (a card served alone).
func cardAgent(servers []caddyhttp.RouteList, c *CardHandler) (*AgentHandler, *AuthHandler) {
	w := &cardWalk{card: c}
	for _, routes := range servers {
		if w.routes(routes, nil, false); w.agent != nil {
			break
		}
	}
	return w.agent, w.auth
}

// cardWalk is the state of cardAgent's walk.
type cardWalk struct {
	card  *CardHandler
	agent *AgentHandler
	auth  *AuthHandler
}

// routes walks rl with guard in front of it; inherited says the card was
// seen in an enclosing list and waits for its a2a handler. It reports
// whether the card still waits when rl ends: a card seen in rl waits only
// within rl.
func (w *cardWalk) routes(rl caddyhttp.RouteList, guard *AuthHandler, inherited bool) bool {
	waiting := inherited
	for _, rt := range rl {
		g := guard
		for _, mh := range rt.Handlers {
			if w.agent != nil {
				return false
			}
			switch v := mh.(type) {
			case *AuthHandler:
				g = v
			case *CardHandler:
				waiting = v == w.card // another card ends the wait
				inherited = inherited && !waiting
			case *AgentHandler:
				if waiting {
					w.agent, w.auth = v, g
					return false
				}
			case *caddyhttp.Subroute:
				waiting = w.routes(v.Routes, g, waiting)
			}
		}
	}
	return waiting && inherited
}
