package client

import (
	"bytes"
	"context"
	"errors"
	"io"

	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// MaxSSEEvent bounds one server-sent event of a stream: each of its lines
// and its joined data.
const MaxSSEEvent = 16 << 20

// ErrSSETooLarge is wrapped by the error for a line or an event beyond
// MaxSSEEvent.
var ErrSSETooLarge = sse.ErrTooLarge

// readStream hands the data of each event of an event stream (events
// with blank data skipped) to each, until the stream ends (nil), each
// fails, or the stream breaks.
func readStream(ctx context.Context, method string, body io.Reader, each func([]byte) error) error {
	sr := sse.NewReader(body, MaxSSEEvent)
	for {
		ev, err := sr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				if errors.Is(ctx.Err(), context.DeadlineExceeded) {
					return transportErr(method+": timed out", nil)
				}
				return &Error{Kind: KindInterrupted, Msg: "interrupted"}
			}
			if errors.Is(err, ErrSSETooLarge) {
				return protocolf("%s: %v", method, err)
			}
			return transportErr(method+": stream broken", err)
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		if err := each(ev.Data); err != nil {
			return err
		}
	}
}
