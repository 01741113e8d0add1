package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Exec modes and output formats.
const (
	ModePerTurn    = "per_turn"
	ModePerContext = "per_context"
	FormatNDJSON   = "ndjson"
	FormatText     = "text"
)

// DefaultGracePeriod is how long a canceled process gets before SIGTERM,
// and again before SIGKILL.
const DefaultGracePeriod = 5 * time.Second

// Exec runs a local program per turn or per context (TURN-3). The program
// is started from Argv without a shell, in the turn's workspace, in its own
// process group, with a scrubbed environment (PATH, HOME, LANG, TZ plus
// Env). It reads turn request lines on stdin and writes turn-event lines
// (or plain text lines with Format "text") on stdout; stderr goes to the
// debug log, bounded. Processes are always reaped; on cancel or timeout the
// whole process group is terminated. The program runs under a supervisor
// (internal/procsup) that kills its whole process tree when it exits or
// when the gateway dies, even on kill -9 or OOM (OPS-7; on Linux including
// processes that left the group).
type Exec struct {
	// Argv is the program and its arguments. Required.
	Argv []string
	// Env adds environment variables to the scrubbed environment.
	Env map[string]string
	// Mode is per_turn (a process per turn; default) or per_context (one
	// long-lived process per context, closed when the context is evicted).
	Mode string
	// Format is ndjson (turn-event protocol; default) or text (every stdout
	// line is assistant text; per_turn only).
	Format string
	// Timeout bounds one turn; 0 means no limit. A timed-out turn ends as a
	// transient failure.
	Timeout time.Duration
	// GracePeriod is how long a canceled process may take to answer (per
	// context: with an end event) before SIGTERM, and between SIGTERM and
	// SIGKILL. Default 5s.
	GracePeriod time.Duration
	// MaxLineBytes bounds one stdout line. Default 16 MiB.
	MaxLineBytes int
	// MaxOutputBytes bounds the stdout of one turn. Default 64 MiB.
	MaxOutputBytes int64
	// MaxStderrBytes bounds how much stderr is logged per process (the rest
	// is read and dropped). Default 64 KiB.
	MaxStderrBytes int
	// Logger receives stderr lines (debug) and process problems.
	Logger *zap.Logger
}

// Validate checks the configuration.
func (e *Exec) Validate() error {
	if len(e.Argv) == 0 || e.Argv[0] == "" {
		return errors.New("exec: a command is required")
	}
	switch e.Mode {
	case "", ModePerTurn, ModePerContext:
	default:
		return fmt.Errorf("exec: mode must be per_turn or per_context, not %q", e.Mode)
	}
	switch e.Format {
	case "", FormatNDJSON:
	case FormatText:
		if e.Mode == ModePerContext {
			return errors.New("exec: format text needs mode per_turn (a text stream has no end of turn)")
		}
	default:
		return fmt.Errorf("exec: format must be ndjson or text, not %q", e.Format)
	}
	if e.Timeout < 0 || e.GracePeriod < 0 || e.MaxLineBytes < 0 || e.MaxOutputBytes < 0 || e.MaxStderrBytes < 0 {
		return errors.New("exec: durations and limits must not be negative")
	}
	return nil
}

func (e *Exec) grace() time.Duration {
	if e.GracePeriod <= 0 {
		return DefaultGracePeriod
	}
	return e.GracePeriod
}

func (e *Exec) logger() *zap.Logger {
	if e.Logger == nil {
		return zap.NewNop()
	}
	return e.Logger
}

func (e *Exec) maxOutput() int64 {
	if e.MaxOutputBytes <= 0 {
		return DefaultMaxOutputBytes
	}
	return e.MaxOutputBytes
}

// environ builds the scrubbed environment.
func (e *Exec) environ() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := e.Env[k]; !override {
				env = append(env, k+"="+v)
			}
		}
	}
	for k, v := range e.Env {
		env = append(env, k+"="+v)
	}
	return env
}

// RunTurn implements backend.Backend.
func (e *Exec) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	perContext := e.Mode == ModePerContext
	var p *proc
	if perContext {
		if old, ok := req.Session.Value.(*proc); ok {
			select {
			case <-old.exited:
				e.terminate(old) // died between turns; start afresh
			default:
				if old.cwd == req.Cwd {
					p = old
				} else {
					e.terminate(old)
				}
			}
		}
	}
	if p == nil {
		np, err := e.start(req.Cwd, req.TraceParent)
		if err != nil {
			return err
		}
		p = np
		if perContext {
			req.Session.Value = p
		}
	}
	line, err := json.Marshal(req)
	if err != nil {
		e.terminate(p)
		return fmt.Errorf("exec: encoding the turn request: %w", err)
	}
	var deadline time.Time
	if e.Timeout > 0 {
		deadline = time.Now().Add(e.Timeout)
	}
	if perContext {
		// The turn line carries the whole message and may exceed the pipe
		// buffer: the write is bounded by the turn's context and timeout.
		if err := p.writeLine(ctx, append(line, '\n'), deadline); err != nil {
			e.terminate(p)
			req.Session.Value = nil
			switch {
			case ctx.Err() != nil:
				return ctx.Err()
			case errors.Is(err, os.ErrDeadlineExceeded):
				return errKind(backend.ErrorKindTransient, fmt.Errorf("exec: turn timed out after %v", e.Timeout))
			default:
				return errors.New("exec: the agent process does not read its input")
			}
		}
	} else {
		// A program may ignore its stdin: write without blocking the turn
		// (terminate closes stdin, which ends a blocked write).
		go func() {
			_, _ = p.stdin.Write(append(line, '\n'))
			_ = p.stdin.Close()
		}()
		defer e.terminate(p) // reaps, and kills whatever is left
	}
	err = e.loop(ctx, p, req, emit, perContext, deadline)
	if err != nil && perContext {
		if alive := e.survives(p); !alive {
			req.Session.Value = nil
		}
	}
	return err
}

// loop reads the events of one turn.
func (e *Exec) loop(ctx context.Context, p *proc, req *backend.TurnRequest, emit backend.Emit, perContext bool, deadline time.Time) error {
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := time.NewTimer(time.Until(deadline))
		defer t.Stop()
		timeout = t.C
	}
	var total int64
	max := e.maxOutput()
	sawEnd := false
	for {
		select {
		case <-ctx.Done():
			e.cancel(p, req.TaskID, perContext)
			return ctx.Err()
		case <-timeout:
			e.cancel(p, req.TaskID, perContext)
			return errKind(backend.ErrorKindTransient, fmt.Errorf("exec: turn timed out after %v", e.Timeout))
		case m := <-p.lines:
			if m.err != nil {
				if errors.Is(m.err, io.EOF) {
					return e.exitStatus(p, sawEnd)
				}
				e.terminate(p)
				return fmt.Errorf("exec: reading agent output: %w", m.err)
			}
			total += int64(len(m.b)) + 1
			if total > max {
				e.terminate(p)
				return errOutputTooLong
			}
			if e.Format == FormatText {
				if err := emit(backend.Event{V: backend.EventVersion, Type: backend.EventText, Text: string(m.b) + "\n"}); err != nil {
					if ctx.Err() != nil {
						continue
					}
					e.terminate(p)
					return err
				}
				continue
			}
			ev, ok, err := decodeEvent(m.b)
			if err != nil {
				e.terminate(p)
				return err
			}
			if !ok {
				continue
			}
			if err := emit(ev); err != nil {
				if ctx.Err() != nil {
					continue // the cancel branch handles it
				}
				e.terminate(p)
				return err
			}
			if ev.Type == backend.EventEnd {
				sawEnd = true
				if perContext {
					return nil
				}
			}
		}
	}
}

// exitStatus waits for a process whose output ended and says how its turn
// ended: exit 0 (or an end event) is fine, anything else an internal error.
func (e *Exec) exitStatus(p *proc, sawEnd bool) error {
	e.awaitExit(p)
	if sawEnd {
		return nil
	}
	if st := p.cmd.ProcessState; st != nil && st.Success() {
		return nil
	}
	code := -1
	if st := p.cmd.ProcessState; st != nil {
		code = st.ExitCode()
	}
	return fmt.Errorf("exec: the agent process exited with status %d", code)
}

// cancel stops the current turn: per context, a cancel line and up to the
var (
	_ backend.Backend       = (*Exec)(nil)
	_ backend.SessionCloser = (*Exec)(nil)
)
