package caddymodule

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

func init() {
	caddy.RegisterModule(EchoBackend{})
}

// EchoBackend is the built-in deterministic backend (TURN-2): it streams the
// prompt back as "Echo: <prompt>" in several chunks, with one tool event
// pair and token usage, then ends the turn input-required. For demos and
// tests.
type EchoBackend struct {
	// Chunks is how many text chunks the answer is split into. Default: 3.
	Chunks int `json:"chunks,omitempty"`
	// Delay is the pause before each chunk, to exercise long turns.
	// Default: 0.
	Delay caddy.Duration `json:"delay,omitempty"`
}

// CaddyModule returns the Caddy module information.
func (EchoBackend) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.backends.echo",
		New: func() caddy.Module { return new(EchoBackend) },
	}
}

// RunTurn implements backend.Backend.
func (e *EchoBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	return e.runtimeBackend().RunTurn(ctx, req, emit)
}

// runtimeBackend returns the agent/backend echo backend the module
// configures (the one the service runs turns on).
func (e *EchoBackend) runtimeBackend() backend.Backend {
	return backend.EchoBackend{Chunks: e.Chunks, Delay: time.Duration(e.Delay)}
}

// UnmarshalCaddyfile parses:
//
//	backend echo {
//		chunks <n>
//		delay <duration>
//	}
func (e *EchoBackend) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "echo"
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		switch d.Val() {
		case "chunks":
			n, err := intArg(d)
			if err != nil {
				return err
			}
			if n < 1 {
				return d.Errf("backend echo: chunks must be at least 1")
			}
			e.Chunks = n
		case "delay":
			var v string
			if !d.Args(&v) {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur < 0 {
				return d.Errf("backend echo: delay: invalid duration %q", v)
			}
			e.Delay = caddy.Duration(dur)
		default:
			return d.Errf("backend echo: unknown option %q", d.Val())
		}
	}
	return nil
}

var (
	_ backend.Backend       = (*EchoBackend)(nil)
	_ caddyfile.Unmarshaler = (*EchoBackend)(nil)
)
