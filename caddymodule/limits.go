package caddymodule

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent"
)

// LimitsConfig is what one principal may do on an a2a endpoint (AUTH-6):
// the JSON form of a `limits <principal|*|scope:NAME|claim:NAME=VALUE> { … }`
// block. The handler's Limits map is keyed by the same selector.
type LimitsConfig struct {
	// AllowMethods are the A2A 1.0 method names the principal may call
	// (SendMessage, SendStreamingMessage, GetTask, ListTasks, CancelTask,
	// SubscribeToTask, CreateTaskPushNotificationConfig,
	// GetTaskPushNotificationConfig, ListTaskPushNotificationConfigs,
	// DeleteTaskPushNotificationConfig, GetExtendedAgentCard). Empty: all.
	// Others are refused with HTTP 403 / reason PERMISSION_DENIED.
	AllowMethods []string `json:"allow_methods,omitempty"`
	// Rate is the sustained requests per second the principal may make
	// over every method and binding (the Caddyfile takes N/s, N/m or N/h).
	// 0: no limit. Beyond it: HTTP 429 with Retry-After, reason
	// RESOURCE_EXHAUSTED.
	Rate float64 `json:"rate,omitempty"`
	// Burst is how many requests may come at once above Rate. Default: the
	// rate per second rounded up, at least 1.
	Burst int `json:"burst,omitempty"`
	// MaxTurns bounds the principal's turns running at once (0: no limit);
	// a message beyond it gets HTTP 429, reason RESOURCE_EXHAUSTED.
	MaxTurns int `json:"max_turns,omitempty"`
	// Site, when set, names the multi-agent site whose agents share this
	// rule (AUTH-10): the a2a handlers holding a rule for the same
	// principal with the same Site and values count its rate and
	// max_turns once, across all of them. The Caddyfile sets it on the
	// site root's rules and on the copies the agents that inherit the
	// root's auth receive. Empty: this handler counts on its own.
	Site string `json:"site,omitempty"`
}

// rule returns the agent form of the config.
func (c *LimitsConfig) rule() agent.LimitRule {
	return agent.LimitRule{AllowMethods: c.AllowMethods, Rate: c.Rate, Burst: c.Burst, MaxTurns: c.MaxTurns}
}

// counterKey names the shared counters of the rule of principal p: the
// site, the principal key and the values, so that two rules differing in
// anything count apart.
func (c *LimitsConfig) counterKey(p string) string {
	return fmt.Sprintf("%s\x00%s\x00%q\x00%g\x00%d\x00%d", c.Site, p, c.AllowMethods, c.Rate, c.Burst, c.MaxTurns)
}

// limitRules returns the handler's limits keyed by principal (nil: none);
// rules with a Site count in the app's counters for it (AUTH-10).
func (h *AgentHandler) limitRules(app *App) map[string]agent.LimitRule {
	if len(h.Limits) == 0 {
		return nil
	}
	out := make(map[string]agent.LimitRule, len(h.Limits))
	for p, c := range h.Limits {
		if c == nil {
			continue
		}
		r := c.rule()
		if c.Site != "" && app != nil {
			r.Counters = app.limitCounters(c.counterKey(p))
		}
		out[p] = r
	}
	return out
}

// limitCounters returns the config's counters named key, made on first
// use: the agents of one site share them (AUTH-10). A reload starts new
// ones, as it starts new services.
func (a *App) limitCounters(key string) *agent.LimitCounters {
	a.site.mu.Lock()
	defer a.site.mu.Unlock()
	if a.site.counters == nil {
		a.site.counters = map[string]*agent.LimitCounters{}
	}
	c, ok := a.site.counters[key]
	if !ok {
		c = agent.NewLimitCounters()
		a.site.counters[key] = c
	}
	return c
}

// inheritLimits gives the agent handler sub the root's rules for every
// principal it has no rule of its own for, all marked with site (so the
// root and its agents count them once), and marks the root's own rules
// too (AUTH-10). An agent's own `limits P` block replaces the root's rule
// for P on that agent and counts on its own.
func inheritLimits(root, sub *AgentHandler, site string) {
	for p, c := range root.Limits {
		if c == nil {
			continue
		}
		c.Site = site
		if _, own := sub.Limits[p]; own {
			continue
		}
		if sub.Limits == nil {
			sub.Limits = map[string]*LimitsConfig{}
		}
		cp := *c
		cp.AllowMethods = slices.Clone(c.AllowMethods)
		sub.Limits[p] = &cp
	}
}

// validateLimits checks every limits rule (AUTH-6).
func (h *AgentHandler) validateLimits() error {
	for p, c := range h.Limits {
		if err := agent.ValidateLimitKey(p); err != nil {
			return fmt.Errorf("limits: %v", err)
		}
		if c == nil {
			continue
		}
		if err := c.rule().Validate(); err != nil {
			return fmt.Errorf("limits %s: %v", p, err)
		}
	}
	return nil
}

// unmarshalLimits parses one limits block (repeatable, one per principal
// or selector; AUTH-8 adds the scope: and claim: selectors, whose
// precedence agent.Config.Limits states):
//
//	limits <principal|*|scope:NAME|claim:NAME=VALUE> {
//		allow_methods <Method…>
//		rate <N>/s|m|h [burst <M>]
//		max_turns <N>
//	}
func (h *AgentHandler) unmarshalLimits(d *caddyfile.Dispenser) error {
	var principal string
	if !d.Args(&principal) || d.NextArg() {
		return d.ArgErr()
	}
	if h.Limits == nil {
		h.Limits = map[string]*LimitsConfig{}
	}
	if _, dup := h.Limits[principal]; dup {
		return d.Errf("limits: duplicate block for %s", principal)
	}
	c := &LimitsConfig{}
	opts := newBlockOptions("limits " + principal)
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := opts.once(d); err != nil {
			return err
		}
		switch d.Val() {
		case "allow_methods":
			c.AllowMethods = d.RemainingArgs()
			if len(c.AllowMethods) == 0 {
				return d.ArgErr()
			}
		case "rate":
			args := d.RemainingArgs()
			if len(args) != 1 && (len(args) != 3 || args[1] != "burst") {
				return d.Err("rate: want rate <N>/s [burst <M>]")
			}
			r, err := parseRate(args[0])
			if err != nil {
				return d.Errf("rate: %v", err)
			}
			c.Rate = r
			if len(args) == 3 {
				b, err := strconv.Atoi(args[2])
				if err != nil {
					return d.Errf("rate: burst must be a positive integer, not %q", args[2])
				}
				if b == 0 { // unset in JSON; the sign is LimitRule.Validate's
					return d.Err("rate: burst must be at least 1")
				}
				c.Burst = b
			}
		case "max_turns":
			n, err := countArg(d, "max_turns")
			if err != nil {
				return err
			}
			c.MaxTurns = n
		default:
			return d.Errf("limits: unknown option %q (want allow_methods, rate or max_turns)", d.Val())
		}
	}
	h.Limits[principal] = c // the values: validateLimits
	return nil
}

// parseRate reads "<N>/s", "<N>/m" or "<N>/h" as requests per second.
func parseRate(v string) (float64, error) {
	num, unit, ok := strings.Cut(v, "/")
	if !ok {
		return 0, fmt.Errorf("%q: want <N>/s, <N>/m or <N>/h", v)
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q: the count must be a positive number", v)
	}
	switch unit {
	case "s":
		return n, nil
	case "m":
		return n / 60, nil
	case "h":
		return n / 3600, nil
	}
	return 0, fmt.Errorf("%q: the unit must be s, m or h", v)
}
