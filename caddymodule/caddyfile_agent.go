package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/caddy-a2a/caddy-a2a/push"
)

// unmarshalOption parses one agent subdirective of the a2a Caddyfile block.
// It reports false when the current token is not one of its options.
//
//	backend <name> [<args…>] { … }
//	namespace <ns>
//	owner_scope <scope>|-
//	context_wait <duration>
//	idle_timeout <duration>
//	max_concurrent_turns <n>
//	history_limit <n>
//	cancel_drain <duration>
//	keep_alive <duration>
//	subscribe_idle_timeout <duration>
//	max_body_size <size>
//	thinking_exposure none|tool_trace|raw_thinking…
//	cancel_on_disconnect
//	allowed_cwds <dir…>
//	default_cwd <dir>
//	sensitive_metadata_keys <key…>
//	artifact_urls http|file
//	max_artifact_size <size>
//	inline_artifact_bytes <size>
//	max_text_part_size <size>
//	max_inline_part_size <size>
//	max_file_part_size <size>
//	text_media_types <type…>
//	attachment_media_types <type…>
//	push { … } (see unmarshalPush)
func (h *AgentHandler) unmarshalOption(d *caddyfile.Dispenser) (bool, error) {
	opt := d.Val()
	switch opt {
	case "backend":
		if !d.NextArg() {
			return true, d.ArgErr()
		}
		name := d.Val()
		unm, err := caddyfile.UnmarshalModule(d, "a2a.backends."+name)
		if err != nil {
			return true, err
		}
		h.BackendRaw = caddyconfig.JSONModuleObject(unm, "backend", name, nil)
	case "namespace":
		return true, stringArg(d, &h.Namespace)
	case "owner_scope":
		return true, stringArg(d, &h.OwnerScope)
	case "context_wait":
		return true, durationArg(d, &h.ContextWait)
	case "idle_timeout":
		return true, durationArg(d, &h.IdleTimeout)
	case "cancel_drain":
		return true, durationArg(d, &h.CancelDrain)
	case "keep_alive":
		return true, durationArg(d, &h.KeepAlive)
	case "subscribe_idle_timeout":
		return true, durationArg(d, &h.SubscribeIdleTimeout)
	case "max_concurrent_turns":
		n, err := intArg(d)
		if err == nil && n < 1 {
			err = d.Errf("max_concurrent_turns must be at least 1")
		}
		h.MaxConcurrentTurns = n
		return true, err
	case "history_limit":
		n, err := intArg(d)
		if err == nil && n < 1 {
			err = d.Errf("history_limit must be at least 1")
		}
		h.HistoryLimit = n
		return true, err
	case "max_body_size":
		var v string
		if !d.Args(&v) || d.NextArg() {
			return true, d.ArgErr()
		}
		n, err := humanize.ParseBytes(v)
		if err != nil || n == 0 {
			return true, d.Errf("max_body_size: invalid size %q", v)
		}
		h.MaxBodySize = int64(n)
	case "thinking_exposure":
		types := []string{}
		for d.NextArg() {
			switch d.Val() {
			case "none":
			case "tool_trace", "raw_thinking":
				types = append(types, d.Val())
			default:
				return true, d.Errf("thinking_exposure: unknown type %q (want none, tool_trace or raw_thinking)", d.Val())
			}
		}
		h.ThinkingExposure = &types
	case "cancel_on_disconnect":
		if d.NextArg() {
			return true, d.ArgErr()
		}
		h.CancelOnDisconnect = true
	case "allowed_cwds":
		h.AllowedCwds = d.RemainingArgs()
		if len(h.AllowedCwds) == 0 {
			return true, d.ArgErr()
		}
	case "default_cwd":
		return true, stringArg(d, &h.DefaultCwd)
	case "sensitive_metadata_keys":
		h.SensitiveMetadataKeys = d.RemainingArgs()
		if len(h.SensitiveMetadataKeys) == 0 {
			return true, d.ArgErr()
		}
	case "artifact_urls":
		if err := stringArg(d, &h.ArtifactURLs); err != nil {
			return true, err
		}
		if h.ArtifactURLs != "http" && h.ArtifactURLs != "file" {
			return true, d.Errf("artifact_urls must be http or file, not %q", h.ArtifactURLs)
		}
	case "inline_artifact_bytes":
		n, err := sizeArg(d)
		h.InlineArtifactBytes = n
		return true, err
	case "max_artifact_size", "max_text_part_size", "max_inline_part_size", "max_file_part_size":
		n, err := sizeArg(d)
		if err != nil {
			return true, err
		}
		switch opt {
		case "max_artifact_size":
			h.MaxArtifactSize = n
		case "max_text_part_size":
			h.MaxTextPartSize = n
		case "max_inline_part_size":
			h.MaxInlinePartSize = n
		default:
			h.MaxFilePartSize = n
		}
	case "text_media_types":
		h.TextMediaTypes = d.RemainingArgs()
		if len(h.TextMediaTypes) == 0 {
			return true, d.ArgErr()
		}
	case "push":
		p, err := unmarshalPush(d)
		if err != nil {
			return true, err
		}
		h.Push = p
	case "attachment_media_types":
		h.AttachmentMediaTypes = d.RemainingArgs()
		if len(h.AttachmentMediaTypes) == 0 {
			return true, d.ArgErr()
		}
	default:
		return false, nil
	}
	return true, nil
}

// attach receives the card and auth handlers built by the same a2a
// directive: the agent keeps a copy of the card (for the extended card,
// output modes and required extensions) and the card learns what the agent
// exposes.
func (h *AgentHandler) attach(card *CardHandler, _ *AuthHandler) {
	if card == nil {
		return
	}
	if h.Push != nil {
		card.PushNotifications = true // capabilities.pushNotifications (PUSH-1)
	}
	if h.ThinkingExposure != nil && len(*h.ThinkingExposure) > 0 {
		card.ThinkingTypes = append([]string(nil), (*h.ThinkingExposure)...)
	} else if h.ThinkingExposure == nil {
		card.ThinkingTypes = []string{"tool_trace"}
	}
	c := *card
	h.Card = &c
}

func stringArg(d *caddyfile.Dispenser, out *string) error {
	if !d.Args(out) || d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

func durationArg(d *caddyfile.Dispenser, out *caddy.Duration) error {
	opt := d.Val()
	var v string
	if !d.Args(&v) || d.NextArg() {
		return d.ArgErr()
	}
	dur, err := caddy.ParseDuration(v)
	if err != nil || dur <= 0 {
		return d.Errf("%s: invalid duration %q", opt, v)
	}
	*out = caddy.Duration(dur)
	return nil
}

func intArg(d *caddyfile.Dispenser) (int, error) {
	var v string
	if !d.Args(&v) || d.NextArg() {
		return 0, d.ArgErr()
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, d.Errf("invalid number %q", v)
	}
	return n, nil
}

// unmarshalPush parses the push block of the a2a directive:
//
//	push {
//		queue local-file
//		queue redis-streams {
//			redis_url <url>
//			stream <key>
//			retry_key <key>
//			dead_stream <key>
//			consumer_group <name>
//			consumer_name <name>
//			lease_timeout_ms <ms>
//		}
//		allow_private_networks <cidr…>
//		timeout <duration>
//		max_attempts <n>
//		retry_initial <duration>
//		retry_max <duration>
//		retry_jitter <0..1>
//		workers <n>
//		lease <duration>
//		max_configs_per_task <n>
//	}
func unmarshalPush(d *caddyfile.Dispenser) (*PushConfig, error) {
	p := &PushConfig{}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] && opt != "allow_private_networks" {
			return nil, d.Errf("push: duplicate option %q", opt)
		}
		seen[opt] = true
		switch opt {
		case "queue":
			if !d.NextArg() {
				return nil, d.ArgErr()
			}
			p.Queue = d.Val()
			switch p.Queue {
			case pushQueueLocal:
				if d.NextArg() || d.NextBlock(d.Nesting()) {
					return nil, d.Errf("push: queue local-file takes no options")
				}
			case pushQueueRedis:
				if d.NextArg() {
					return nil, d.ArgErr()
				}
				r, err := unmarshalPushRedis(d)
				if err != nil {
					return nil, err
				}
				p.Redis = r
			default:
				return nil, d.Errf("push: unknown queue %q (want local-file or redis-streams)", p.Queue)
			}
		case "allow_private_networks":
			args := d.RemainingArgs()
			// An empty environment variable leaves no argument: allow nothing.
			if _, err := push.ParseCIDRs(args...); err != nil {
				return nil, d.Errf("push: allow_private_networks: %v", err)
			}
			p.AllowPrivateNetworks = append(p.AllowPrivateNetworks, args...)
		case "timeout":
			if err := durationArg(d, &p.Timeout); err != nil {
				return nil, err
			}
		case "retry_initial":
			if err := durationArg(d, &p.RetryInitial); err != nil {
				return nil, err
			}
		case "retry_max":
			if err := durationArg(d, &p.RetryMax); err != nil {
				return nil, err
			}
		case "lease":
			if err := durationArg(d, &p.Lease); err != nil {
				return nil, err
			}
		case "max_attempts", "workers", "max_configs_per_task":
			n, err := intArg(d)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, d.Errf("push: %s must be at least 1", opt)
			}
			switch opt {
			case "workers":
				p.Workers = n
			case "max_configs_per_task":
				p.MaxConfigsPerTask = n
			default:
				p.MaxAttempts = n
			}
		case "retry_jitter":
			var v string
			if !d.Args(&v) || d.NextArg() {
				return nil, d.ArgErr()
			}
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return nil, d.Errf("push: retry_jitter must be a number between 0 and 1")
			}
			p.RetryJitter = f
		default:
			return nil, d.Errf("push: unknown option %q", opt)
		}
	}
	// The rules of the values themselves are push's, as for JSON configs.
	if err := p.config().Validate(); err != nil {
		return nil, d.Err(err.Error())
	}
	return p, nil
}

func unmarshalPushRedis(d *caddyfile.Dispenser) (*PushRedisConfig, error) {
	r := &PushRedisConfig{}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return nil, d.Errf("push: duplicate option %q", opt)
		}
		seen[opt] = true
		var dst *string
		switch opt {
		case "redis_url":
			dst = &r.URL
		case "stream":
			dst = &r.Stream
		case "retry_key":
			dst = &r.RetryKey
		case "dead_stream":
			dst = &r.DeadStream
		case "consumer_group":
			dst = &r.ConsumerGroup
		case "consumer_name":
			dst = &r.ConsumerName
		case "lease_timeout_ms":
			n, err := intArg(d)
			if err != nil {
				return nil, err
			}
			if n < 1 {
				return nil, d.Errf("push: lease_timeout_ms must be at least 1")
			}
			r.LeaseTimeoutMS = int64(n)
			continue
		default:
			return nil, d.Errf("push: unknown redis-streams option %q", opt)
		}
		if err := stringArg(d, dst); err != nil {
			return nil, err
		}
	}
	return r, nil
}
