package caddymodule

import (
	"context"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
)

// upstreamSkills maps a card name to the `backend a2a` whose upstream
// skills that card merges (TURN-9). The agent handler registers its
// backend at provision; the card handlers of the same a2a directive (the
// public one and the agent's copy) look it up on every rendering, so the
// order of provisioning does not matter. A reload replaces the entry.
var upstreamSkills sync.Map // card name → *backends.A2A

// registerUpstreamSkills makes the skills of b part of the card named
// name and discovers the upstream in the background (bounded by ctx and
// the discovery timeout), so the card shows them before the first turn.
func registerUpstreamSkills(ctx context.Context, name string, b *backends.A2A) {
	upstreamSkills.Store(name, b)
	go func() {
		dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, _ = b.Discover(dctx) // a failure is retried by the first turn
	}()
}

// skillsOf returns the card option for the card named name.
func skillsOf(name string) func() ([]a2a.AgentSkill, uint64) {
	return func() ([]a2a.AgentSkill, uint64) {
		v, ok := upstreamSkills.Load(name)
		if !ok {
			return nil, 0
		}
		return v.(*backends.A2A).Skills()
	}
}
