package caddymodule

import (
	"encoding/json"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
)

func init() {
	httpcaddyfile.RegisterGlobalOption("a2a", parseAppOption)
}

// parseAppOption parses the global a2a block:
//
//	{
//		a2a {
//			data_dir <path>
//			store sqlite | store redis <url>… | store redis { … } (caddyfile_store.go)
//			durability full|normal
//			shutdown_timeout <duration>
//			redis_rpc { … } (see unmarshalRedisRPC)
//			share_listeners
//		}
//	}
func parseAppOption(d *caddyfile.Dispenser, existing any) (any, error) {
	app := new(App)
	if existing != nil {
		if prev, ok := existing.(httpcaddyfile.App); ok {
			if err := json.Unmarshal(prev.Value, app); err != nil {
				return nil, err
			}
		}
	}
	d.Next() // the option name
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	options := newBlockOptions("a2a")
	for d.NextBlock(0) {
		opt := d.Val()
		if err := options.once(d); err != nil {
			return nil, err
		}
		if opt == "retention" {
			r, err := unmarshalRetention(d)
			if err != nil {
				return nil, err
			}
			app.Retention = r
			continue
		}
		if opt == "redis_rpc" {
			r, err := unmarshalRedisRPC(d)
			if err != nil {
				return nil, err
			}
			app.RedisRPC = r
			continue
		}
		if opt == "store" {
			if err := parseStore(d, app); err != nil {
				return nil, err
			}
			continue
		}
		if opt == "share_listeners" {
			if d.NextArg() {
				return nil, d.ArgErr()
			}
			app.ShareListeners = true
			continue
		}
		var val string
		if !d.Args(&val) || d.NextArg() {
			return nil, d.Errf("a2a: %s takes exactly one value", opt)
		}
		switch opt {
		case "data_dir":
			app.DataDir = val
		case "durability":
			app.Durability = val // the values: App.validate
		case "shutdown_timeout":
			dur, err := caddy.ParseDuration(val)
			if err != nil || dur < 0 {
				return nil, d.Errf("a2a: shutdown_timeout: invalid duration %q", val)
			}
			app.ShutdownTimeout = caddy.Duration(dur)
		default:
			return nil, d.Errf("a2a: unknown global option %q", opt)
		}
	}
	if err := validated(d, app.validate); err != nil {
		return nil, err
	}
	return httpcaddyfile.App{Name: "a2a", Value: caddyconfig.JSON(app, nil)}, nil
}
