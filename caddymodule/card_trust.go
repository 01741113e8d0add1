package caddymodule

import (
	"runtime/debug"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// processStart is when this process loaded the module; the extended card
// reports the uptime from it.
var processStart = time.Now()

// gatewayVersion returns the caddy-a2a module version of this build
// ("(devel)" for a local build).
func gatewayVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	if bi.Main.Path == "github.com/caddy-a2a/caddy-a2a" {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == "github.com/caddy-a2a/caddy-a2a" {
			return d.Version
		}
	}
	return "unknown"
}

func orDefaultInt(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

func orDefaultInt64(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// runtimeDetails collects what the extended card reports (CARD-8): names
// of backends and numeric limits only.
func (h *AgentHandler) runtimeDetails(app *App) card.RuntimeDetails {
	d := card.RuntimeDetails{
		Bindings: []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON},
		Store:    app.Store,
		Push:     "disabled",
		Limits: map[string]int64{
			"max_concurrent_turns": int64(orDefaultInt(h.MaxConcurrentTurns, 64)),
			"max_body_bytes":       orDefaultInt64(h.MaxBodySize, 32<<20),
			"history_limit":        int64(orDefaultInt(h.HistoryLimit, 100)),
		},
		GatewayVersion: gatewayVersion(),
		Started:        processStart,
	}
	if h.Card != nil && h.Card.PushNotifications {
		d.Push = "webhook"
	}
	return d
}
