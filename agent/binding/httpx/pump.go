package httpx

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Batching bounds: the events (and bytes of them) written back to back
// before a flush, so a stream that never runs dry still reaches its client.
const (
	maxBatchEvents = 32
	maxBatchBytes  = 32 << 10
)

// Pump sends the headers of an event stream on w and writes every event of
// st, each rendered by render and with its sequence number as the SSE id,
// with keep-alive comments every keepAlive while idle, until the stream
// ends or the client goes away, then closes it. The events at hand (see
// agent.Stream's Buffered) are written back to back
// and flushed once, the headers with the first of them; everything written
// is flushed before the stream waits, and the last events go out with the
// end of the response when the handler returns. A Buffered stream is
// waited on in this loop's own select, with one keep-alive timer reset per
// wait (no goroutine and no context per wait); an idle stream's goroutine
// parks here, with a shallow stack.
func Pump(ctx context.Context, keepAlive time.Duration, w http.ResponseWriter, st agent.Stream, render func(any) []byte) {
	defer st.Close()
	// The loop's state lives in p, its work in p's methods: this frame,
	// where the stream waits, stays small.
	p := newPump(w, st, render)
	ready := st.Ready()
	var timer *time.Timer
	if ready != nil {
		timer = time.NewTimer(keepAlive)
		defer timer.Stop()
	}
	for {
		if p.due() && p.flush() != nil {
			return
		}
		var ev any
		var ok bool
		switch {
		case p.pending:
			// At hand: Next does not wait (no keep-alive deadline needed).
			ev, ok = st.Next(ctx)
		case ready != nil:
			if !st.Buffered() {
				timer.Reset(keepAlive)
				select {
				case <-ready:
					continue // Buffered tells whether an event came
				case <-timer.C:
					if p.comment() != nil {
						return
					}
					continue
				case <-ctx.Done():
					return
				}
			}
			ev, ok = st.Next(ctx)
		default:
			var idle bool
			if ev, ok, idle = nextWithin(ctx, st, keepAlive); idle {
				if p.comment() != nil {
					return
				}
				continue
			}
		}
		if !ok || p.write(ev) != nil {
			return // what is written goes out as the response ends
		}
	}
}

// pump is the state of one Pump loop.
type pump struct {
	sw      *sse.Writer
	st      agent.Stream
	render  func(any) []byte
	pending bool // written, not flushed (the headers at first)
	batch   int  // events written since the last flush
	size    int  // and their bytes
}

//go:noinline
func newPump(w http.ResponseWriter, st agent.Stream, render func(any) []byte) *pump {
	p := &pump{sw: sse.Open(w), st: st, render: render, pending: true}
	return p
}

// due reports whether what is written must be flushed now: the next event
// is not at hand (or cannot be told), or the batch is full.
//
//go:noinline
func (p *pump) due() bool {
	return p.pending && (p.batch >= maxBatchEvents || p.size >= maxBatchBytes || !p.st.Buffered())
}

//go:noinline
func (p *pump) flush() error {
	p.pending, p.batch, p.size = false, 0, 0
	return p.sw.Flush()
}

//go:noinline
func (p *pump) comment() error { return p.sw.Comment("keep-alive") }

// write queues one event, its sequence number as its SSE id (the id a
// client resumes after with Last-Event-ID, RPC-17).
//
//go:noinline
func (p *pump) write(ev any) error {
	data := p.render(ev)
	if err := p.sw.Queue(strconv.FormatUint(p.st.Seq(), 10), data); err != nil {
		return err
	}
	p.pending = true
	p.batch++
	p.size += len(data)
	return nil
}

// nextWithin waits for the next event of st at most keepAlive; idle says
// the interval passed without one (the client is still there).
func nextWithin(ctx context.Context, st agent.Stream, keepAlive time.Duration) (ev any, ok, idle bool) {
	wctx, cancel := context.WithTimeout(ctx, keepAlive)
	defer cancel()
	ev, ok = st.Next(wctx)
	return ev, ok, !ok && ctx.Err() == nil && wctx.Err() != nil
}
