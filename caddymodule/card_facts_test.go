package caddymodule

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// route is a route of already provisioned handlers.
func route(hs ...caddyhttp.MiddlewareHandler) caddyhttp.Route {
	return caddyhttp.Route{Handlers: hs}
}

// Issue 27 item 6: an a2a_card finds the a2a handler after it (in its
// route, a later route of its list, a subroute) and the a2a_auth in front
// of that handler; not one after another card, nor one outside its own
// subroute (another site's).
func TestCardAgent(t *testing.T) {
	c1, c2, c3 := new(CardHandler), new(CardHandler), new(CardHandler)
	a1, a2, a3 := new(AgentHandler), new(AgentHandler), new(AgentHandler)
	auth1, auth2 := new(AuthHandler), new(AuthHandler)
	sub := func(rs ...caddyhttp.Route) *caddyhttp.Subroute { return &caddyhttp.Subroute{Routes: rs} }
	servers := []caddyhttp.RouteList{
		{
			// site 1: card, auth, agent in one route (the a2a directive)
			route(sub(route(new(HealthHandler), c1, auth1, a1))),
			// site 2: a card alone in its subroute, then site 3's agent
			route(sub(route(c2))),
			route(sub(route(auth2, a2))),
		},
		{
			// a card whose agent is in a later route and a subroute
			route(c3),
			route(sub(route(a3))),
		},
	}
	for _, tc := range []struct {
		c     *CardHandler
		agent *AgentHandler
		auth  *AuthHandler
	}{{c1, a1, auth1}, {c2, nil, nil}, {c3, a3, nil}, {new(CardHandler), nil, nil}} {
		a, auth := cardAgent(servers, tc.c)
		if a != tc.agent || auth != tc.auth {
			t.Errorf("card %p: agent %p auth %p, want %p %p", tc.c, a, auth, tc.agent, tc.auth)
		}
	}
	// Another card in between ends the wait.
	lone := []caddyhttp.RouteList{{route(c1, c2, a1)}}
	if a, _ := cardAgent(lone, c1); a != nil {
		t.Error("a card followed by another card found the other's agent")
	}
	if a, _ := cardAgent(lone, c2); a != a1 {
		t.Error("the second card did not find its agent")
	}
}

// The facts of an agent with every option on, and the card that sets some
// itself keeping them (overrides).
func TestCardFactsOverride(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\nbearer t\n}\nwebsocket\ngrpc\nlegacy_v03\nthinking_exposure none\ndedupe_window off\n}")
	if err != nil {
		t.Fatal(err)
	}
	f := hs.agent.cardFacts()
	if f.WebSocketPath != "/ws" || len(f.Bindings) != 3 || !f.LegacyV03 || f.ThinkingTypes != nil || f.DedupeWindow != 0 || f.EventLogSize != 1000 || f.PushNotifications {
		t.Errorf("agent facts: %+v", f)
	}
	if s := securityOf(hs.auth); s == nil || !s.Bearer || !s.FromEnv {
		t.Errorf("security: %+v", s)
	}
	if securityOf(&AuthHandler{}) == nil || securityOf(nil) != nil {
		t.Error("an empty a2a_auth advertises the environment's schemes (from_env); no a2a_auth none")
	}
	c := &CardHandler{EventLogSize: 7, Bindings: []string{"JSONRPC"}}
	if got := c.explicitFacts().Or(f); got.EventLogSize != 7 || len(got.Bindings) != 1 || got.WebSocketPath != "/ws" {
		t.Errorf("card overrides: %+v", got)
	}
}

// A card handler with no http app around it (nor an a2a handler) serves
// its own fields with the defaults.
func TestCardAloneServes(t *testing.T) {
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	h := &CardHandler{Config: card.Config{Name: "alone"}}
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })
	if err := h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://a.example"+card.WellKnownPath, nil), next); err != nil {
		t.Fatal(err)
	}
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `"alone"`) || strings.Contains(body, "pushNotifications\":true") || strings.Contains(body, "stream-resume") {
		t.Errorf("card alone: %d %s", rec.Code, body)
	}
}
