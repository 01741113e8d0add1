package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// parseStore parses the store option of the a2a global block:
//
//	store sqlite
//	store redis <url> [<url>…]
//	store redis {
//		url <url> [<url>…]          # repeatable; several URLs = cluster nodes
//		key_prefix <prefix>
//		max_shared_blob_bytes <n>
//		instance_lease <duration>   # SCALE-2 heartbeat lease, default 15s
//		event_log_ttl <duration>|off # a finished task's event log, default 10m
//	}
func parseStore(d *caddyfile.Dispenser, app *App) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	switch kind := d.Val(); kind {
	case "sqlite":
		if d.NextArg() || d.NextBlock(1) {
			return d.Errf("a2a: store sqlite takes no more values")
		}
		app.Store, app.Redis = kind, nil
		return nil
	case "redis":
	default:
		return d.Errf("a2a: store: unknown store %q (want sqlite or redis)", kind)
	}
	app.Store = "redis"
	r := &StoreRedis{URLs: d.RemainingArgs()}
	options := newBlockOptions("a2a: store redis", "url")
	for d.NextBlock(1) {
		opt := d.Val()
		if err := options.once(d); err != nil {
			return err
		}
		args := d.RemainingArgs()
		switch opt {
		case "url":
			if len(args) == 0 {
				return d.Errf("a2a: store redis: url takes at least one URL")
			}
			r.URLs = append(r.URLs, args...)
			continue
		case "instance_lease":
			if len(args) != 1 {
				return d.Errf("a2a: store redis: instance_lease takes exactly one duration")
			}
			dur, err := caddy.ParseDuration(args[0])
			if err != nil {
				return d.Errf("a2a: store redis: instance_lease: invalid duration %q", args[0])
			}
			if dur == 0 { // unset in JSON; the range is validateStore's
				return d.Err(errInstanceLease.Error())
			}
			r.InstanceLease = caddy.Duration(dur)
			continue
		case "event_log_ttl":
			if len(args) != 1 {
				return d.Errf("a2a: store redis: event_log_ttl takes exactly one duration or off")
			}
			if args[0] == "off" {
				r.EventLogTTL = -1
				continue
			}
			dur, err := caddy.ParseDuration(args[0])
			if err != nil {
				return d.Errf("a2a: store redis: event_log_ttl: invalid duration %q (or off)", args[0])
			}
			if dur <= 0 { // 0 is unset and a negative one is off in JSON
				return d.Err(errEventLogTTL.Error())
			}
			r.EventLogTTL = caddy.Duration(dur)
			continue
		case "key_prefix", "max_shared_blob_bytes":
		default:
			return d.Errf("a2a: store redis: unknown option %q", opt)
		}
		if len(args) != 1 {
			return d.Errf("a2a: store redis: %s takes exactly one value", opt)
		}
		if opt == "key_prefix" {
			r.KeyPrefix = args[0]
			continue
		}
		n, err := strconv.ParseInt(args[0], 10, 64)
		if err != nil {
			return d.Errf("a2a: store redis: max_shared_blob_bytes: invalid number %q", args[0])
		}
		if n == 0 { // unset in JSON; the sign is validateStore's
			return d.Errf("a2a: store redis: max_shared_blob_bytes must be a positive number of bytes")
		}
		r.MaxSharedBlobBytes = n
	}
	app.Redis = r
	return validated(d, app.validateStore)
}
