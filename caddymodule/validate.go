package caddymodule

import (
	"fmt"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// The rule of configuration checks (issue 27): the Caddyfile parser fills
// fields and reports syntax only (argument counts, unparsable values);
// the modules' Validate methods check the values, so a JSON config gets
// the error a Caddyfile gets. The parser runs the same Validate once a
// block is filled, so `caddy adapt` still refuses a bad value.

// notNegative checks an optional count: 0 means the default, so only a
// negative value is wrong (the message JSON and Caddyfile configs share).
func notNegative(opt string, n int64) error {
	if n < 0 {
		return fmt.Errorf("%s: must not be negative", opt)
	}
	return nil
}

// countArg reads a count option of the Caddyfile. A JSON config leaves a
// count unset with 0, which the Caddyfile cannot say, so an explicit 0 is
// refused here; a negative value is left to Validate.
func countArg(d *caddyfile.Dispenser, opt string) (int, error) {
	n, err := intArg(d)
	if err == nil && n == 0 {
		err = d.Errf("%s: must be at least 1", opt)
	}
	return n, err
}

// validated runs a filled block's Validate and reports its error at the
// block, as a Caddyfile error.
func validated(d *caddyfile.Dispenser, validate func() error) error {
	if err := validate(); err != nil {
		return d.Err(err.Error())
	}
	return nil
}
