package cli

import (
	"fmt"
	"sync"
	"time"

	"github.com/spf13/cobra"
)

// Host is what the command tree needs from the program that runs it;
// caddymodule sets it (SetHost), so this package imports no Caddy.
type Host struct {
	// Exit returns the error that makes the program exit with code
	// (always > 1) without printing anything more.
	Exit func(cmd *cobra.Command, code int) error
	// ParseDuration parses a duration the way the program's config does
	// (Caddy's syntax: "30d", "12h").
	ParseDuration func(string) (time.Duration, error)
}

var (
	hostMu sync.Mutex
	host   Host
)

// SetHost sets the program hooks of the command tree; a nil field keeps
// the default (an error carrying the code; time.ParseDuration).
func SetHost(h Host) {
	hostMu.Lock()
	host = h
	hostMu.Unlock()
}

func currentHost() Host {
	hostMu.Lock()
	defer hostMu.Unlock()
	h := host
	if h.Exit == nil {
		h.Exit = func(_ *cobra.Command, code int) error { return &statusError{code: code} }
	}
	if h.ParseDuration == nil {
		h.ParseDuration = time.ParseDuration
	}
	return h
}

// statusError is the default Exit: an error that only carries its code.
type statusError struct{ code int }

func (e *statusError) Error() string { return fmt.Sprintf("exiting with status %d", e.code) }

// ExitCode returns the code the program should exit with.
func (e *statusError) ExitCode() int { return e.code }
