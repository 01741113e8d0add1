package caddymodule

import (
	"runtime/debug"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
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
