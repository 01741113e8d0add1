package readiness

import (
	"context"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Starting is the reason of a store that is not open yet, or of a
// listener the app has not opened yet.
const Starting = "starting"

// ErrStarting is what a check returns for a part that the app opens at
// its start and has not opened yet; its reason is Starting.
var ErrStarting = errors.New("starting")

// Reason maps a check's error onto a fixed phrase: an error's own text
// may name a host, a URL with a password or a local path, and the probe
// is public.
func Reason(err error) string {
	switch {
	case errors.Is(err, store.ErrNotOpen), errors.Is(err, ErrStarting):
		return Starting
	case errors.Is(err, store.ErrClosed):
		return "closed"
	case errors.Is(err, store.ErrLeaseExpired):
		return "lease not renewed in time; other instances may fail this instance's tasks"
	case errors.Is(err, store.ErrWriterStopped):
		return "the writer stopped"
	case errors.Is(err, store.ErrSync):
		return "the write-ahead log could not be synced to disk"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer in time"
	case errors.Is(err, store.ErrUnavailable):
		return "unreachable"
	}
	return "not usable"
}
