package caddymodule

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/backends"
)

func init() {
	caddy.RegisterModule(ExecBackend{})
}

// ExecBackend runs a local program for each turn, or one long-lived program
// per conversation context (TURN-3). The program is started from its argv
// without a shell, in the task's workspace (metadata.<ns>.cwd), in its own
// process group, with a scrubbed environment: PATH, HOME, LANG and TZ of
// the gateway plus `env`. It reads the turn request as one JSON line on
// stdin and writes turn-event protocol lines (NDJSON, see the README) on
// stdout; stderr goes to the debug log only. Cancel and timeout terminate
// the whole process group (SIGTERM, then SIGKILL after the grace period).
type ExecBackend struct {
	// Command is the program and its arguments (argv; no shell). Required.
	Command []string `json:"command,omitempty"`

	// Env adds environment variables. Values support {env.*} and {file.*}
	// placeholders, resolved at provision time.
	Env map[string]string `json:"env,omitempty"`

	// Mode is per_turn (a new process per turn) or per_context (one process
	// per context, sent one turn line per turn, closed when the context is
	// evicted). Default: per_turn.
	Mode string `json:"mode,omitempty"`

	// Format is ndjson (the turn-event protocol) or text (each stdout line
	// is assistant text; per_turn only). Default: ndjson.
	Format string `json:"format,omitempty"`

	// Timeout bounds one turn; a timed-out turn ends input-required with
	// "A temporary error occurred. Please retry.". Default: none.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// GracePeriod is how long a canceled program may take to finish (per
	// context: to answer the cancel line with an end event) before SIGTERM,
	// and between SIGTERM and SIGKILL. Default: 5s.
	GracePeriod caddy.Duration `json:"grace_period,omitempty"`

	// MaxLineSize bounds one stdout line, in bytes. Default: 16777216 (16 MiB).
	MaxLineSize int `json:"max_line_size,omitempty"`

	// MaxOutputSize bounds the stdout of one turn, in bytes. Default:
	// 67108864 (64 MiB).
	MaxOutputSize int64 `json:"max_output_size,omitempty"`

	// MaxStderrLog bounds how many stderr bytes are logged per process (at
	// debug level); the rest is drained and dropped. Default: 65536.
	MaxStderrLog int `json:"max_stderr_log,omitempty"`

	exec *backends.Exec
}

// CaddyModule returns the Caddy module information.
func (ExecBackend) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "a2a.backends.exec",
		New: func() caddy.Module { return new(ExecBackend) },
	}
}

// Provision builds the backend.
func (b *ExecBackend) Provision(ctx caddy.Context) error {
	repl := caddy.NewReplacer()
	env := make(map[string]string, len(b.Env))
	for k, v := range b.Env {
		env[k] = repl.ReplaceAll(v, "")
	}
	b.exec = &backends.Exec{
		Argv: b.Command, Env: env, Mode: b.Mode, Format: b.Format,
		Timeout: time.Duration(b.Timeout), GracePeriod: time.Duration(b.GracePeriod),
		MaxLineBytes: b.MaxLineSize, MaxOutputBytes: b.MaxOutputSize, MaxStderrBytes: b.MaxStderrLog,
		Logger: ctx.Logger(),
	}
	return nil
}

// Validate checks the configuration.
func (b *ExecBackend) Validate() error { return b.exec.Validate() }

// checkProgram refuses, at provision, a program that cannot be started
// from dir, the agent's default workspace (OPS-9).
func (b *ExecBackend) checkProgram(dir string) error { return b.exec.CheckProgram(dir) }

// RunTurn implements backend.Backend.
func (b *ExecBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	return b.exec.RunTurn(ctx, req, emit)
}

// CloseSession implements backend.SessionCloser (per_context processes).
func (b *ExecBackend) CloseSession(s *backend.Session) { b.exec.CloseSession(s) }

// UnmarshalCaddyfile parses:
//
//	backend exec <program> [<args…>] {
//		env <key> <value>
//		mode per_turn|per_context
//		format ndjson|text
//		timeout <duration>
//		grace_period <duration>
//		max_line_size <size>
//		max_output_size <size>
//		max_stderr_log <size>
//	}
func (b *ExecBackend) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // "exec"
	b.Command = d.RemainingArgs()
	if len(b.Command) == 0 {
		return d.Errf("backend exec: a command is required")
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		opt := d.Val()
		if opt != "env" && seen[opt] {
			return d.Errf("backend exec: duplicate option %q", opt)
		}
		seen[opt] = true
		switch opt {
		case "env":
			var k, v string
			if !d.Args(&k, &v) || d.NextArg() {
				return d.ArgErr()
			}
			if b.Env == nil {
				b.Env = map[string]string{}
			}
			b.Env[k] = v
		case "mode":
			if err := stringArg(d, &b.Mode); err != nil {
				return err
			}
			if b.Mode != backends.ModePerTurn && b.Mode != backends.ModePerContext {
				return d.Errf("backend exec: mode must be per_turn or per_context, not %q", b.Mode)
			}
		case "format":
			if err := stringArg(d, &b.Format); err != nil {
				return err
			}
			if b.Format != backends.FormatNDJSON && b.Format != backends.FormatText {
				return d.Errf("backend exec: format must be ndjson or text, not %q", b.Format)
			}
		case "timeout":
			if err := durationArg(d, &b.Timeout); err != nil {
				return err
			}
		case "grace_period":
			if err := durationArg(d, &b.GracePeriod); err != nil {
				return err
			}
		case "max_line_size", "max_output_size", "max_stderr_log":
			n, err := sizeArg(d)
			if err != nil {
				return err
			}
			switch opt {
			case "max_line_size":
				b.MaxLineSize = int(n)
			case "max_output_size":
				b.MaxOutputSize = n
			default:
				b.MaxStderrLog = int(n)
			}
		default:
			return d.Errf("backend exec: unknown option %q", opt)
		}
	}
	return nil
}

// sizeArg parses one size argument such as 1MiB or 65536.
func sizeArg(d *caddyfile.Dispenser) (int64, error) {
	opt := d.Val()
	var v string
	if !d.Args(&v) || d.NextArg() {
		return 0, d.ArgErr()
	}
	n, err := humanize.ParseBytes(v)
	if err != nil || n == 0 || n > 1<<40 {
		return 0, d.Errf("%s: invalid size %q", opt, v)
	}
	return int64(n), nil
}

var (
	_ caddy.Provisioner     = (*ExecBackend)(nil)
	_ caddy.Validator       = (*ExecBackend)(nil)
	_ backend.Backend       = (*ExecBackend)(nil)
	_ backend.SessionCloser = (*ExecBackend)(nil)
	_ caddyfile.Unmarshaler = (*ExecBackend)(nil)
)
