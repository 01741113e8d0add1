package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
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
//	event_log_size <n>
//	dedupe_window <duration>|off
//	dedupe extension|always
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
//	limits <principal|*> { … } (see unmarshalLimits)
//	redis_rpc { … } (see unmarshalRedisRPC)
//	websocket [<path>] { … } (see unmarshalWebSocket)
//	grpc [{ reflection }]
//	grpc_jsonrpc
func (h *AgentHandler) unmarshalOption(d *caddyfile.Dispenser) (bool, error) {
	opt := d.Val()
	switch opt {
	case "backend":
		if !d.NextArg() {
			return true, d.ArgErr()
		}
		name := d.Val()
		if err := knownBackend(name); err != nil {
			return true, d.Err(err.Error())
		}
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
	case "limits":
		return true, h.unmarshalLimits(d)
	case "event_log_size": // RPC-17
		n, err := intArg(d)
		if err == nil && n == 0 { // 0 is unset in JSON; the range is Validate's
			err = d.Err(errEventLogSize.Error())
		}
		h.EventLogSize = n
		return true, err
	case "dedupe_window": // RPC-18
		var v string
		if !d.Args(&v) || d.NextArg() {
			return true, d.ArgErr()
		}
		if v == "off" {
			h.DedupeWindow = -1
			return true, nil
		}
		dur, err := caddy.ParseDuration(v)
		if err != nil || dur <= 0 {
			return true, d.Errf("dedupe_window: invalid duration %q (or off)", v)
		}
		h.DedupeWindow = caddy.Duration(dur)
	case "dedupe": // RPC-18: opt-in by the extension, or forced
		return true, stringArg(d, &h.Dedupe) // values: Validate
	case "max_concurrent_turns":
		n, err := countArg(d, opt)
		h.MaxConcurrentTurns = n
		return true, err
	case "history_limit":
		n, err := countArg(d, opt)
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
			if d.Val() != "none" { // the types: Validate
				types = append(types, d.Val())
			}
		}
		h.ThinkingExposure = &types
	case "cancel_on_disconnect":
		if d.NextArg() {
			return true, d.ArgErr()
		}
		h.CancelOnDisconnect = true
	case "legacy_v03": // RPC-2
		if d.NextArg() {
			return true, d.ArgErr()
		}
		h.LegacyV03 = true
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
		return true, stringArg(d, &h.ArtifactURLs) // values: Validate
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
	case "redis_rpc":
		r, err := unmarshalRedisRPC(d)
		if err != nil {
			return true, err
		}
		h.RedisRPC = r
	case "websocket":
		c, err := unmarshalWebSocket(d)
		if err != nil {
			return true, err
		}
		h.WebSocket = c
	case "grpc":
		return true, h.unmarshalGRPC(d)
	case "grpc_jsonrpc":
		return true, h.unmarshalGRPCJSONRPC(d)
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
// directive: the auth handler learns whether gRPC is served, and the agent
// keeps a copy of the card (for the extended card, output modes and
// required extensions) with the schemes of the auth block, which the
// agent cannot see at provision time; the rest of what the card says
// about the agent it derives from the agent (card_facts.go).
func (h *AgentHandler) attach(card *CardHandler, auth *AuthHandler) {
	if auth != nil {
		auth.GRPC = h.GRPC || h.GRPCJSONRPC // gRPC-shaped refusals only where gRPC is served
	}
	if card == nil {
		return
	}
	c := *card
	c.Security = securityOf(auth)
	h.Card = &c
}
