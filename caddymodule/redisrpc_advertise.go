package caddymodule

import (
	"errors"
	"net/url"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// validateAdvertise checks advertise_url (issue 31): an absolute URL
// without credentials (it is published on the public card), and only in
// an a2a handler's redis_rpc block (global is true for the global a2a
// option's block, which has no card of its own to advertise it on).
func (c *RedisRPCConfig) validateAdvertise(global bool) error {
	if c == nil || c.AdvertiseURL == "" {
		return nil
	}
	if global {
		return errors.New("redis_rpc: advertise_url belongs in the redis_rpc block of the a2a handler whose card advertises it, not in the global a2a option")
	}
	u, err := url.Parse(c.AdvertiseURL)
	if err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "" && u.Path == "") {
		return errors.New("redis_rpc: advertise_url must be an absolute URL, e.g. redis://redis.example.com:6379/0")
	}
	if u.User != nil {
		return errors.New("redis_rpc: advertise_url must not carry credentials: it is published on the public agent card")
	}
	return nil
}

// redisInterface is the card interface of the Redis Streams carrier at
// the advertised URL (none when it is not advertised).
func redisInterface(advertised string) []card.Interface {
	if advertised == "" {
		return nil
	}
	return []card.Interface{{Binding: a2a.BindingRedisStreams, Absolute: advertised}}
}
