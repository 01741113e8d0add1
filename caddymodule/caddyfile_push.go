package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

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
//		sign es256|eddsa { kid …  key_file …  [issuer …]  [ttl …] } (repeatable; see unmarshalPushSign)
//	}
func unmarshalPush(d *caddyfile.Dispenser) (*PushConfig, error) {
	p := &PushConfig{}
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	durationOptions := map[string]*caddy.Duration{"timeout": &p.Timeout, "retry_initial": &p.RetryInitial,
		"retry_max": &p.RetryMax, "lease": &p.Lease}
	options := newBlockOptions("push", "allow_private_networks", "sign")
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if err := options.once(d); err != nil {
			return nil, err
		}
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
			// An empty environment variable leaves no argument: allow nothing.
			// The CIDRs are checked by push's Validate.
			args := d.RemainingArgs()
			p.AllowPrivateNetworks = append(p.AllowPrivateNetworks, args...)
		case "timeout", "retry_initial", "retry_max", "lease":
			if err := durationArg(d, durationOptions[opt]); err != nil {
				return nil, err
			}
		case "max_attempts", "workers", "max_configs_per_task":
			n, err := countArg(d, "push: "+opt)
			if err != nil {
				return nil, err
			}
			switch opt {
			case "workers":
				p.Workers = n
			case "max_configs_per_task":
				p.MaxConfigsPerTask = n
			default:
				p.MaxAttempts = n
			}
		case "sign":
			if err := p.unmarshalPushSign(d); err != nil {
				return nil, err
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
	return p, validated(d, p.config().Validate)
}

func unmarshalPushRedis(d *caddyfile.Dispenser) (*PushRedisConfig, error) {
	r := &PushRedisConfig{}
	stringOptions := map[string]*string{"redis_url": &r.URL, "stream": &r.Stream, "retry_key": &r.RetryKey,
		"dead_stream": &r.DeadStream, "consumer_group": &r.ConsumerGroup, "consumer_name": &r.ConsumerName}
	options := newBlockOptions("push redis-streams")
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if err := options.once(d); err != nil {
			return nil, err
		}
		switch dst := stringOptions[opt]; {
		case dst != nil:
			if err := stringArg(d, dst); err != nil {
				return nil, err
			}
		case opt == "lease_timeout_ms":
			n, err := countArg(d, "push: lease_timeout_ms")
			if err != nil {
				return nil, err
			}
			r.LeaseTimeoutMS = int64(n)
		default:
			return nil, d.Errf("push: unknown redis-streams option %q", opt)
		}
	}
	return r, nil
}
