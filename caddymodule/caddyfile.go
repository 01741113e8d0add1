package caddymodule

import (
	"slices"
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

// blockOptions refuses an option given twice in one Caddyfile block, with
// "<block>: duplicate <option>" (the option as written).
type blockOptions struct {
	block      string            // names the block in errors
	suffix     string            // follows the option in errors (" block")
	repeatable []string          // options that may appear more than once
	alias      map[string]string // options that count as another
	seen       map[string]bool
}

// newBlockOptions tracks the options of one block; the repeatable ones
// may appear more than once.
func newBlockOptions(block string, repeatable ...string) *blockOptions {
	return &blockOptions{block: block, repeatable: repeatable, seen: map[string]bool{}}
}

// once records the option the dispenser is on and fails when the block
// had it (or an alias of it) already.
func (b *blockOptions) once(d *caddyfile.Dispenser) error {
	opt := d.Val()
	if slices.Contains(b.repeatable, opt) {
		return nil
	}
	key := opt
	if k, ok := b.alias[opt]; ok {
		key = k
	}
	if b.seen[key] {
		return d.Errf("%s: duplicate %s%s", b.block, opt, b.suffix)
	}
	b.seen[key] = true
	return nil
}

// each calls parse with each option of the block the dispenser is in,
// after once refused an option given twice; the first error ends the
// block.
func (b *blockOptions) each(d *caddyfile.Dispenser, parse func(opt string) error) error {
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		if err := b.once(d); err != nil {
			return err
		}
		if err := parse(d.Val()); err != nil {
			return err
		}
	}
	return nil
}
