package httpx

import (
	"context"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Buffered is implemented by a Stream that can tell whether its next event
// is already at hand (Next would not wait for it).
type Buffered interface {
	// Buffered reports whether Next would return without waiting.
	Buffered() bool
}

// Batching bounds: the events (and bytes of them) written back to back
// before a flush, so a stream that never runs dry still reaches its client.
const (
	maxBatchEvents = 32
	maxBatchBytes  = 32 << 10
)

// Pump writes every event of st, each rendered by render and with its
// sequence number as the SSE id, with keep-alive
// comments every keepAlive while idle, until the stream ends or the client
// goes away; the stream counts as open on svc meanwhile. Events already at
// hand when one is written (see Buffered) are written with it and flushed
// once; a stream flushes before it waits.
func Pump(ctx context.Context, svc *agent.Service, keepAlive time.Duration, sw *sse.Writer, st agent.Stream, render func(any) []byte) {
	defer st.Close()
	defer svc.StreamOpened()()
	bst, _ := st.(Buffered)
	batch, bytes := 0, 0
	for {
		if batch > 0 && (bst == nil || batch >= maxBatchEvents || bytes >= maxBatchBytes || !bst.Buffered()) {
			if err := sw.Flush(); err != nil {
				return
			}
			batch, bytes = 0, 0
		}
		var ev any
		var ok bool
		if batch > 0 {
			// At hand: Next does not wait (no keep-alive deadline needed).
			ev, ok = st.Next(ctx)
		} else {
			// Wait for the next event at most one keep-alive interval; on
			// an idle stream send a comment instead (no goroutine per
			// stream).
			wctx, cancel := context.WithTimeout(ctx, keepAlive)
			ev, ok = st.Next(wctx)
			idle := !ok && ctx.Err() == nil && wctx.Err() != nil
			cancel()
			if idle {
				if err := sw.Comment("keep-alive"); err != nil {
					return
				}
				continue
			}
		}
		if !ok {
			if batch > 0 {
				_ = sw.Flush()
			}
			return
		}
		// The event's sequence number is its SSE id, which a client
		// resumes after with Last-Event-ID (RPC-17).
		data := render(ev)
		if err := sw.Queue(strconv.FormatUint(st.Seq(), 10), data); err != nil {
			return
		}
		batch++
		bytes += len(data)
	}
}
