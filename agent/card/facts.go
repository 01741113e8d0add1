package card

import (
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// Facts are what a card says about the agent that serves it and the auth in
// front of that agent, besides its Config: facts the agent's own options
// decide (push, thinking exposure, resumable streams, idempotent sends,
// bindings, the WebSocket path, the 0.3 dual card) and the auth schemes.
// The card handler derives them from the agent (and auth) handler of its
// route; a value configured on the card itself overrides the derived one
// (see Or).
type Facts struct {
	// Security declares the auth schemes guarding the agent (nil: none).
	Security *Security
	// PushNotifications sets capabilities.pushNotifications (PUSH-1).
	PushNotifications bool
	// ThinkingTypes are the enabled thinking-exposure types; non-empty
	// advertises the thinking-exposure extension. An empty non-nil list is
	// a value (none), not an unset one.
	ThinkingTypes []string
	// LegacyV03 serves the dual 1.0/0.3 card (RPC-2).
	LegacyV03 bool
	// EventLogSize, when positive, advertises resumable streams (RPC-17).
	EventLogSize int
	// DedupeWindow, when positive, advertises idempotent sends (RPC-18).
	DedupeWindow time.Duration
	// DedupeAlways marks every send as deduplicated (params.always).
	DedupeAlways bool
	// Bindings are the protocol bindings advertised, in preference order
	// (nil: JSONRPC, HTTP+JSON).
	Bindings []string
	// GRPCPort, when set, is the port the GRPC interface is advertised at
	// (the dedicated gRPC listener, issue 29).
	GRPCPort string
	// WebSocketPath, when set, advertises the WebSocket binding at that
	// path (XPORT-3).
	WebSocketPath string
	// RedisStreamsURL, when set, advertises the Redis Streams carrier
	// (protocolBinding redis-streams, XPORT-5) at this URL.
	RedisStreamsURL string
	// PushSign are the push signing keys whose public halves the JWKS
	// publishes (PUSH-8).
	PushSign []jws.SignKey
}

// Or returns f with every fact f leaves unset taken from derived: a false
// flag, a zero number or duration, an empty string and a nil list (or nil
// Security) are unset. So a fact set on the card overrides the agent's,
// and a card that sets none says exactly what the agent does. An explicit
// false cannot override a derived true.
func (f Facts) Or(derived Facts) Facts {
	if f.Security == nil {
		f.Security = derived.Security
	}
	f.PushNotifications = f.PushNotifications || derived.PushNotifications
	if f.ThinkingTypes == nil {
		f.ThinkingTypes = derived.ThinkingTypes
	}
	f.LegacyV03 = f.LegacyV03 || derived.LegacyV03
	if f.EventLogSize == 0 {
		f.EventLogSize = derived.EventLogSize
	}
	if f.DedupeWindow == 0 {
		f.DedupeWindow = derived.DedupeWindow
	}
	f.DedupeAlways = f.DedupeAlways || derived.DedupeAlways
	if f.Bindings == nil {
		f.Bindings = derived.Bindings
	}
	if f.GRPCPort == "" {
		f.GRPCPort = derived.GRPCPort
	}
	if f.WebSocketPath == "" {
		f.WebSocketPath = derived.WebSocketPath
	}
	if f.RedisStreamsURL == "" {
		f.RedisStreamsURL = derived.RedisStreamsURL
	}
	if f.PushSign == nil {
		f.PushSign = derived.PushSign
	}
	return f
}
