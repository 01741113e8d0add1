package card

import (
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/version"
)

// RuntimeDetails are the runtime facts the authenticated extended card
// adds (CARD-8). They never hold secrets, file paths or internal host
// names: only names of backends, numbers and the gateway version.
type RuntimeDetails struct {
	// Bindings are the enabled protocol bindings.
	Bindings []string
	// Store names the task store backend (e.g. "sqlite").
	Store string
	// Push names the push delivery backend, or "disabled".
	Push string
	// Limits are named numeric limits (max_concurrent_turns,
	// max_body_bytes, history_limit, …).
	Limits map[string]int64
	// GatewayVersion is the caddy-a2a build version.
	GatewayVersion string
	// Started is when the gateway process started; the card reports it
	// (startedAt, RFC 3339 UTC, whole seconds) rather than an uptime, so
	// that its bytes, and their ETag, stay the same between requests.
	Started time.Time
}

// Extend returns a copy of the public card c with the gateway-runtime
// extension (GatewayRuntimeExtension) appended to
// capabilities.extensions; the A2A card has no free-form metadata field,
// so the details travel as the extension's params:
//
//	{"bindings":[…],"store":"sqlite","push":"disabled",
//	 "limits":{"max_concurrent_turns":64,…},
//	 "gatewayVersion":"v0.1.0","startedAt":"2026-01-02T15:04:05Z"}
//
// Existing signatures are dropped: the result must be signed again.
func Extend(c *a2a.AgentCard, d RuntimeDetails) *a2a.AgentCard {
	out := *c
	out.Signatures = nil
	out.Capabilities.Extensions = slices.Clone(c.Capabilities.Extensions)
	limits := map[string]any{}
	for k, v := range d.Limits {
		limits[k] = v
	}
	bindings := slices.Clone(d.Bindings)
	if len(bindings) == 0 {
		for _, i := range c.SupportedInterfaces {
			bindings = append(bindings, i.ProtocolBinding)
		}
	}
	params := map[string]any{
		"bindings":       bindings,
		"store":          d.Store,
		"push":           d.Push,
		"limits":         limits,
		"gatewayVersion": d.GatewayVersion,
	}
	if !d.Started.IsZero() {
		params["startedAt"] = d.Started.UTC().Truncate(time.Second).Format(time.RFC3339)
	}
	out.Capabilities.Extensions = append(out.Capabilities.Extensions, a2a.AgentExtension{
		URI:         GatewayRuntimeExtension,
		Description: "Runtime details of the caddy-a2a gateway (authenticated extended card only).",
		Params:      params,
	})
	return &out
}

// ModulePath is the Go module path of caddy-a2a.
const ModulePath = version.ModulePath

// zeroPseudoVersion prefixes the pseudo-version Go records for a module
// required at no real version (a local replace, as xcaddy builds do).
const zeroPseudoVersion = "v0.0.0-00010101000000-"

// GatewayVersion returns the caddy-a2a module version recorded in bi, as
// version.FromBuildInfo reads it (the one reading of the build info). A
// build that records no usable version — no build info, "(devel)", or the
// zero pseudo-version v0.0.0-00010101000000-000000000000 — reports
// fallback (the card version) instead.
func GatewayVersion(bi *debug.BuildInfo, fallback string) string {
	v := version.FromBuildInfo(bi)
	if strings.HasPrefix(v, version.Devel) || strings.HasPrefix(v, zeroPseudoVersion) {
		return fallback
	}
	return v
}
