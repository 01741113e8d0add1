package agent

import "slices"

// Beyond A2A 1.0: the one rule, and where each behaviour keeps it.
//
// Rule: every behaviour the gateway adds to A2A 1.0 leaves a plain 1.0
// request untouched. A client that activates no extension (no
// A2A-Extensions header, gRPC metadata a2a-extensions, WebSocket or Redis
// Streams frame header, or stdio --extension) and whose operator forced
// nothing gets exactly what A2A 1.0 says, whatever its messageId, metadata
// or headers. A behaviour that would change processing is either activated
// by its extension on the request (checked by Service.activated, the same
// rule Negotiate echoes) or is an operator's explicit choice for a whole
// site; what remains for plain clients is output A2A 1.0 itself allows.
//
//   - Idempotent sends (RPC-18, IdempotentSendExtension): only a send that
//     activates the extension, or every send of a site with `dedupe
//     always` (Config.DedupeAlways), is deduplicated by its messageId
//     (Service.idempotent). A plain send always starts a new turn and is
//     not recorded.
//   - Stream resume (RPC-17, StreamResumeExtension): the Last-Event-ID
//     header and metadata.lastEventId of a SubscribeToTask are read only
//     when the request activates the extension (resumeAfter); a plain
//     subscription always starts with the Task snapshot, and a plain
//     client's own metadata.lastEventId is its data, never an error. The
//     SSE `id:` line of every event stays on for everyone: A2A 1.0 tells
//     clients to tolerate SDK extras such as id lines, and the official
//     SDKs send them.
//   - Artifact metadata and thinking exposure (the namespace extensions,
//     card.ArtifactMetadataExtension, card.ThinkingExposureExtension): tool
//     progress, usage, permission and (when the operator enables it)
//     thinking signals are WORKING status updates whose only addition is
//     `metadata.<namespace>`, and artifact metadata is `metadata` of the
//     artifact: 1.0 messages with 1.0's free-form metadata. They cannot be
//     per request (the events of a task are shared by every subscriber);
//     the operator chooses them (thinking_exposure none turns tool traces
//     off).
//   - Push JWT signing (PUSH-8, `push { sign … }`): an operator choice that
//     adds a signed token header to each delivery (and Authorization:
//     Bearer when the push config names no authentication); the delivery
//     body stays the 1.0 StreamResponse and the 1.0 token headers are
//     sent as before.
//   - A2A 0.3 compatibility (RPC-2, legacy_v03): an operator choice; only a
//     request with a 0.3 method name (message/send, tasks/get, …) is
//     translated, a 1.0 method is served as 1.0 (the dual card adds 0.3's members,
//     which 1.0 clients ignore).
//   - The gateway-runtime extension (CARD-8) is declared only on the
//     authenticated extended card, as 1.0 card data.
//   - ProtoJSON input leniency (RPC-14) accepts more spellings of a 1.0
//     request; every answer uses the 1.0 names.
//
// tests/plain_v1_test.go checks the observable part over the real binary.

// IdempotentSendExtension is the extension URI of idempotent sends
// (RPC-18): a send that activates it, and whose messageId the same
// principal already sent to the same task or context within
// Config.DedupeWindow, starts no second turn.
const IdempotentSendExtension = "urn:caddy-a2a:idempotent-send:v1"

// supports reports whether the agent offers the extension uri: it is in
// Config.Extensions or Config.RequiredExtensions (WithDefaults adds the
// built-in ones that are on).
func (s *Service) supports(uri string) bool {
	return slices.Contains(s.cfg.Extensions, uri) || slices.Contains(s.cfg.RequiredExtensions, uri)
}

// activated reports whether call activates the extension uri: the client
// listed it and the agent offers it, the rule Negotiate echoes (RPC-3).
func (s *Service) activated(call Call, uri string) bool {
	return slices.Contains(call.Extensions, uri) && s.supports(uri)
}

// idempotent reports whether the sends of call are deduplicated (RPC-18):
// deduplication is on (DedupeWindow not negative) and the site forces it
// (DedupeAlways) or the call activates IdempotentSendExtension.
func (s *Service) idempotent(call Call) bool {
	if s.cfg.DedupeWindow < 0 {
		return false
	}
	return s.cfg.DedupeAlways || s.activated(call, IdempotentSendExtension)
}

// withBuiltinExtensions adds the built-in extensions that are on to
// c.Extensions (resumable streams always; idempotent sends unless
// deduplication is off), so that Negotiate echoes them and activated
// accepts them even without a card.
func (c Config) withBuiltinExtensions() Config {
	add := func(uri string) {
		if !slices.Contains(c.Extensions, uri) && !slices.Contains(c.RequiredExtensions, uri) {
			c.Extensions = append(slices.Clip(c.Extensions), uri)
		}
	}
	add(StreamResumeExtension)
	if c.DedupeWindow >= 0 {
		add(IdempotentSendExtension)
	}
	return c
}
