package tests

import (
	"testing"
	"time"
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
