package httpx

import (
	"context"
	"net/http"
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

// Pump sends the headers of an event stream on w and writes every event of
// st, each rendered by render and with its sequence number as the SSE id,
// with keep-alive comments every keepAlive while idle, until the stream
// ends or the client goes away; the stream counts as open on svc
// meanwhile. The events at hand (see Buffered) are written back to back
// and flushed once, the headers with the first of them; everything written
// is flushed before the stream waits, and the last events go out with the
// end of the response when the handler returns.
func Pump(ctx context.Context, svc *agent.Service, keepAlive time.Duration, w http.ResponseWriter, st agent.Stream, render func(any) []byte) {
	defer st.Close()
	defer svc.StreamOpened()()
	sw := sse.Open(w)
	bst, _ := st.(Buffered)
	pending := true // written, not flushed: the headers so far
	batch, size := 0, 0
	for {
		if pending && (bst == nil || batch >= maxBatchEvents || size >= maxBatchBytes || !bst.Buffered()) {
			if err := sw.Flush(); err != nil {
				return
			}
			pending, batch, size = false, 0, 0
		}
		var ev any
		var ok bool
		if pending {
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
			return // what is written goes out as the response ends
		}
		// The event's sequence number is its SSE id, which a client
		// resumes after with Last-Event-ID (RPC-17).
		data := render(ev)
		if err := sw.Queue(strconv.FormatUint(st.Seq(), 10), data); err != nil {
			return
		}
		pending = true
		batch++
		size += len(data)
	}
}
