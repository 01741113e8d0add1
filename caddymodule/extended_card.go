package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// processStart is when this process loaded the module; the extended card
// reports the uptime from it.
var processStart = time.Now()

// gatewayVersion returns the caddy-a2a module version of this build, or
// fallback (the card version) when the build records none usable
// ("(devel)", the zero pseudo-version of a local replace).
func gatewayVersion(fallback string) string {
	bi, _ := debug.ReadBuildInfo()
	return card.GatewayVersion(bi, fallback)
}

// runtimeDetails collects what the extended card reports (CARD-8): names
// of backends and numeric limits only; eff and tc are the effective
// service and transport settings.
func (h *AgentHandler) runtimeDetails(app *App, eff agent.Config, tc httpx.TransportConfig) card.RuntimeDetails {
	d := card.RuntimeDetails{
		Bindings: h.bindings(),
		Store:    app.Store,
		Push:     "disabled",
		Limits: map[string]int64{
			"max_concurrent_turns": int64(eff.MaxConcurrentTurns),
			"max_body_bytes":       tc.MaxBodyBytes,
			"history_limit":        int64(eff.HistoryLimit),
		},
		GatewayVersion: gatewayVersion(h.cardVersion()),
		Started:        processStart,
	}
	if h.WebSocket != nil {
		d.Bindings = append(d.Bindings, a2a.BindingWebSocket)
	}
	if h.Card != nil && h.Card.PushNotifications {
		d.Push = "webhook"
	}
	return d
}

// cardVersion is the version the card advertises (its default when unset).
func (h *AgentHandler) cardVersion() string {
	if h.Card == nil || h.Card.Version == "" {
		return card.DefaultVersion
	}
	return h.Card.Version
}

// maxAge is the Cache-Control max-age of the card responses (max_age,
// default card.DefaultMaxAge).
func (h *CardHandler) maxAge() time.Duration {
	if h.MaxAge != nil {
		return time.Duration(*h.MaxAge)
	}
	return card.DefaultMaxAge
}

// extendedCardCache is how the extended card may be cached (A2A 1.0
// §13.3): privately, as long as the public card, varying on the credential
// headers of the auth schemes cardHandler declares.
func (h *AgentHandler) extendedCardCache(cardHandler *card.Handler) httpx.ExtendedCardCache {
	vary := []string{"Authorization"}
	if rt := cardHandler.Runtime(nil); rt.APIKey {
		name := rt.APIKeyHeader
		if name == "" {
			name = auth.DefaultAPIKeyHeader
		}
		vary = append(vary, http.CanonicalHeaderKey(name))
	}
	return httpx.ExtendedCardCache{MaxAge: h.Card.maxAge(), Vary: vary}
}

// maxSignedCards bounds the signed extended cards kept (one per base URL
// and card content).
const maxSignedCards = 64

// extendedCards builds the extended card (CARD-8): the public card as
// served at a base URL plus runtime details, signed like the public card.
// A signed card is kept by its unsigned content, so that a caller gets
// the same bytes, hence the same ETag, until the card changes (ES256
// signatures differ on every signing).
type extendedCards struct {
	cardHandler *card.Handler
	details     card.RuntimeDetails

	mu     sync.Mutex
	signed map[[sha256.Size]byte]*a2a.AgentCard
}

func newExtendedCards(cardHandler *card.Handler, details card.RuntimeDetails) *extendedCards {
	return &extendedCards{cardHandler: cardHandler, details: details, signed: map[[sha256.Size]byte]*a2a.AgentCard{}}
}

// get implements agent.Config.ExtendedCard: the card served at baseURL
// (the call's, from the transport's BaseURL), with only the skills the
// caller may use (agent.UsableSkills reads them from ctx, AUTH-8). The
// card returned is shared: callers do not modify it.
func (ec *extendedCards) get(ctx context.Context, baseURL string) (*a2a.AgentCard, error) {
	c := card.Extend(agent.UsableSkills(ctx, ec.cardHandler.CardAt(baseURL)), ec.details)
	unsigned, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(unsigned)
	ec.mu.Lock()
	defer ec.mu.Unlock()
	if s, ok := ec.signed[key]; ok {
		return s, nil
	}
	if err := ec.cardHandler.Sign(c); err != nil {
		return nil, err
	}
	if len(ec.signed) >= maxSignedCards {
		clear(ec.signed)
	}
	ec.signed[key] = c
	return c, nil
}
