package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/client"
)

// Exit codes of `caddy a2a` (CLI-2).
const (
	// ExitOK is success, including a task that waits for input.
	ExitOK = 0
	// ExitTask means the task failed, was canceled or rejected.
	ExitTask = 1
	// ExitUsage is a usage error: bad flags, arguments or local input.
	ExitUsage = 2
	// ExitTransport is a transport, authentication or protocol error.
	ExitTransport = 3
	// ExitInterrupted is the conventional code after Ctrl-C.
	ExitInterrupted = 130
)

// usageError is a usage error of the CLI: bad flags or arguments (exit
// ExitUsage, like the client's errors of KindUsage for bad local input).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

// usagef returns a usage error (exit ExitUsage).
func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// kindExitCode maps the kind of a client error onto its exit code.
func kindExitCode(k client.Kind) int {
	switch k {
	case client.KindUsage:
		return ExitUsage
	case client.KindTask:
		return ExitTask
	case client.KindInterrupted:
		return ExitInterrupted
	}
	return ExitTransport
}

// exitError is a failure with an exit code of its own that is not a usage
// error (a card with errors, a signature that does not verify: 1); the
// message is printed as one line.
type exitError struct {
	Code int
	Err  error
}

func (e *exitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *exitError) Unwrap() error { return e.Err }

// exitWith wraps err with an exit code.
func exitWith(code int, err error) error { return &exitError{Code: code, Err: err} }

// exitCodeOf maps err to an exit code: an exitError (anywhere in the chain)
// decides; a usage error or a client error (by its kind) next; otherwise 3
// (transport), since unclassified failures of the client are I/O failures.
func exitCodeOf(err error) int {
	if err == nil {
		return ExitOK
	}
	if ee, ok := errors.AsType[*exitError](err); ok {
		return ee.Code
	}
	if _, ok := errors.AsType[*usageError](err); ok {
		return ExitUsage
	}
	if ce, ok := errors.AsType[*client.Error](err); ok {
		return kindExitCode(ce.Kind)
	}
	return ExitTransport
}

// runE adapts fn into a cobra RunE that prints one clear error line on
// stderr ("caddy a2a: <message>") and exits with the code of the error (see
// exitCodeOf). Use it for every command of `caddy a2a`.
func runE(fn func(cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		return finish(cmd, fn(cmd, args))
	}
}

// finish prints err (if any) as one line and turns it into what Caddy's
// Main needs to exit with the right code. Caddy hides the text of errors
// with exit codes above 1 and formats the others as log lines, so the
// message is always printed here and the error returned to cobra is
// silenced.
func finish(cmd *cobra.Command, err error) error {
	if err == nil {
		return nil
	}
	code := exitCodeOf(err)
	var silent *exitError
	if !(errors.As(err, &silent) && silent.Err == nil) {
		fmt.Fprintf(stderr(cmd), "caddy a2a: %s\n", oneLine(err.Error()))
	}
	cmd.SilenceErrors = true
	cmd.SilenceUsage = true
	if r := cmd.Root(); r != nil {
		r.SilenceErrors = true
	}
	if code <= 1 {
		// Caddy's Main exits 1 for any error that is not its own exit error.
		return errors.New("failed")
	}
	// Only the program (caddymodule: caddycmd) can build the error type
	// its Main reads the exit code from.
	return currentHost().Exit(cmd, code)
}

// stderr is where error lines go: the command's configured error writer
// (tests set it) or os.Stderr.
func stderr(cmd *cobra.Command) io.Writer {
	if cmd == nil {
		return os.Stderr
	}
	return cmd.ErrOrStderr()
}

// oneLine collapses a multi-line message to a single line.
func oneLine(s string) string {
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r == '\n' || r == '\r' {
			r = ' '
		}
		out = append(out, r)
	}
	return string(out)
}
