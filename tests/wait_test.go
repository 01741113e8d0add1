package tests

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// waitFor polls cond every 50ms until it holds or within has passed, and
// reports whether it held: the way to wait for an event (a state, a log
// line, a delivery) instead of sleeping for a guessed time.
func waitFor(t *testing.T, within time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if cond() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return cond()
}

// turnLogged waits up to within until one of gws has logged the end of
// taskID's turn (the "turn" line, written after the turn's final write),
// and reports whether one did.
func turnLogged(t *testing.T, within time.Duration, taskID string, gws ...*harness.Gateway) bool {
	t.Helper()
	return waitFor(t, within, func() bool {
		for _, g := range gws {
			for _, l := range strings.Split(g.Output(), "\n") {
				if strings.Contains(l, `"msg":"turn"`) && strings.Contains(l, `"task_id":"`+taskID+`"`) {
					return true
				}
			}
		}
		return false
	})
}
