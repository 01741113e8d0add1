package caddymodule

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// oneArg reads exactly one argument for the current subdirective.
func oneArg(d *caddyfile.Dispenser) (string, error) {
	var v string
	if !d.Args(&v) || d.NextArg() {
		return "", d.ArgErr()
	}
	return v, nil
}

// restArgs reads one or more arguments.
func restArgs(d *caddyfile.Dispenser) ([]string, error) {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return nil, d.ArgErr()
	}
	return args, nil
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
