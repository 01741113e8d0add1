package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// unmarshalRedisRPC parses a redis_rpc block (XPORT-5), inside the a2a
// directive or the global a2a option:
//
//	redis_rpc {
//		url <redis-url>
//		request_stream <key>
//		response_prefix <key>
//		group <name>
//		consumer <name>
//		claim_after <duration>
//		block <duration>
//		max_in_flight <n>
//		max_payload_size <size>
//		reply_max_len <n>
//		reply_ttl <duration>
//		advertise_url <url>
//	}
func unmarshalRedisRPC(d *caddyfile.Dispenser) (*RedisRPCConfig, error) {
	c := &RedisRPCConfig{}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	options := newBlockOptions("redis_rpc")
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if err := options.once(d); err != nil {
			return nil, err
		}
		var err error
		switch opt {
		case "url":
			err = stringArg(d, &c.URL)
		case "request_stream":
			err = stringArg(d, &c.RequestStream)
		case "response_prefix":
			err = stringArg(d, &c.ResponsePrefix)
		case "group":
			err = stringArg(d, &c.Group)
		case "consumer":
			err = stringArg(d, &c.Consumer)
		case "claim_after":
			err = durationArg(d, &c.ClaimAfter)
		case "block":
			err = durationArg(d, &c.Block)
		case "reply_ttl":
			err = durationArg(d, &c.ReplyTTL)
		case "max_in_flight":
			c.MaxInFlight, err = countArg(d, "redis_rpc: max_in_flight")
		case "reply_max_len":
			var n int
			n, err = countArg(d, "redis_rpc: reply_max_len")
			c.ReplyMaxLen = int64(n)
		case "max_payload_size":
			c.MaxPayloadSize, err = sizeArg(d)
		case "advertise_url":
			err = stringArg(d, &c.AdvertiseURL)
		default:
			return nil, d.Errf("redis_rpc: unknown option %q", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, validated(d, c.validate)
}
