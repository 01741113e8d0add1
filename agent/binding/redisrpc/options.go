// Package redisrpc is the Redis Streams JSON-RPC carrier of an
// agent.Service (XPORT-5, `redis-streams`). Requests are stream entries
// {correlation_id, reply_stream, payload[, headers]} read by a consumer
// group; every payload goes through the carrier-neutral jsonrpc.Dispatcher,
// and its answers are entries {correlation_id, payload, final} on the
// reply stream, which must be the configured prefix or lie under it.
//
// Delivery is at least once: an entry is acknowledged only after its last
// response entry is written, entries a dead consumer left pending are
// re-claimed after Options.ClaimAfter (XAUTOCLAIM) and run again, and a
// live consumer refreshes the lease of the entries it is still serving so
// nobody re-claims them meanwhile. The package imports nothing from Caddy.
package redisrpc

import (
	"errors"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/redisstream"
)

// Defaults of Options (XPORT-5).
const (
	DefaultRequestStream  = "iac-code:a2a:requests"
	DefaultResponsePrefix = "iac-code:a2a:responses"
	DefaultGroup          = "iac-code"
	DefaultClaimAfter     = 30 * time.Second
	DefaultBlock          = time.Second
	DefaultBatch          = 16
	DefaultMaxInFlight    = 64
	DefaultMaxPayload     = 32 << 20
	DefaultReplyMaxLen    = 1000
	DefaultReplyTTL       = time.Hour
)

// MaxDeliveries is how many times a request is delivered (first read and
// re-claims) before a re-claiming consumer gives up on it: it answers an
// internal error and acknowledges it instead of running it again, so a
// request that kills every gateway does not come back forever.
const MaxDeliveries = 5

// maxBlock bounds one XREADGROUP wait, so a stop never waits longer.
const maxBlock = 5 * time.Second

// maxStreamName bounds a reply stream name (and a correlation id).
const maxStreamName = 512

// Options configure a Consumer. Zero values take the defaults
// (WithDefaults).
type Options struct {
	// RequestStream is the stream requests are added to. Default
	// DefaultRequestStream.
	RequestStream string
	// ResponsePrefix restricts reply streams: a request's reply_stream
	// must equal it or start with it followed by ':'. Default
	// DefaultResponsePrefix.
	ResponsePrefix string
	// Group is the consumer group; every gateway of the group shares the
	// work. Default DefaultGroup.
	Group string
	// Consumer is this process's name in the group. Default: host name and
	// pid.
	Consumer string
	// ClaimAfter is how long an entry may stay pending with a consumer that
	// no longer refreshes it (a dead process) before another consumer
	// re-claims it (XAUTOCLAIM) and runs it again. Default 30s.
	ClaimAfter time.Duration
	// Block bounds one blocking read (XREADGROUP BLOCK). Default 1s, at
	// most 5s.
	Block time.Duration
	// Batch is the most entries one read returns (COUNT). Default 16.
	Batch int
	// MaxInFlight bounds the requests served at once by this consumer; it
	// reads no more while they are all busy. Default 64.
	MaxInFlight int
	// MaxPayloadBytes bounds a request's payload (and headers); a larger
	// one is answered -32600. Default 32 MiB.
	MaxPayloadBytes int64
	// ReplyMaxLen caps a reply stream (XADD MAXLEN ~). Default 1000.
	ReplyMaxLen int64
	// ReplyTTL is the expiry set on a reply stream at every write, so
	// abandoned reply streams disappear. Default 1h.
	ReplyTTL time.Duration
	// BaseURL is the externally visible base URL passed to the service
	// (artifact links, the extended card), e.g. the card's public_url.
	// Default "" (none).
	BaseURL string
}

// WithDefaults returns o with every zero field set to its default.
func (o Options) WithDefaults() Options {
	if o.RequestStream == "" {
		o.RequestStream = DefaultRequestStream
	}
	if o.ResponsePrefix == "" {
		o.ResponsePrefix = DefaultResponsePrefix
	}
	if o.Group == "" {
		o.Group = DefaultGroup
	}
	if o.Consumer == "" {
		o.Consumer = redisstream.ConsumerName()
	}
	if o.ClaimAfter <= 0 {
		o.ClaimAfter = DefaultClaimAfter
	}
	if o.Block <= 0 {
		o.Block = DefaultBlock
	}
	if o.Block > maxBlock {
		o.Block = maxBlock
	}
	if o.Batch <= 0 {
		o.Batch = DefaultBatch
	}
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = DefaultMaxInFlight
	}
	if o.MaxPayloadBytes <= 0 {
		o.MaxPayloadBytes = DefaultMaxPayload
	}
	if o.ReplyMaxLen <= 0 {
		o.ReplyMaxLen = DefaultReplyMaxLen
	}
	if o.ReplyTTL <= 0 {
		o.ReplyTTL = DefaultReplyTTL
	}
	return o
}

// Check reports an option value that cannot work: a reply prefix that
// would also match the request stream (replies would feed the consumer
// group its own answers).
func (o Options) Check() error {
	o = o.WithDefaults()
	if o.allowedReply(o.RequestStream) {
		return errors.New("redis_rpc: request_stream must not lie under response_prefix")
	}
	if o.ClaimAfter < time.Second {
		return errors.New("redis_rpc: claim_after must be at least 1s")
	}
	return nil
}

// allowedReply reports whether s is a reply stream this consumer may
// write to: the prefix itself or prefix + ":" + something.
func (o Options) allowedReply(s string) bool {
	if s == "" || len(s) > maxStreamName {
		return false
	}
	return s == o.ResponsePrefix || (strings.HasPrefix(s, o.ResponsePrefix+":") && len(s) > len(o.ResponsePrefix)+1)
}
