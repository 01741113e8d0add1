package httpx

import (
	"context"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Pump writes every event of st, each rendered by render and with its
// sequence number as the SSE id, with keep-alive
// comments every keepAlive while idle, until the stream ends or the client
// goes away; the stream counts as open on svc meanwhile.
func Pump(ctx context.Context, svc *agent.Service, keepAlive time.Duration, sw *sse.Writer, st agent.Stream, render func(any) []byte) {
	defer st.Close()
	defer svc.StreamOpened()()
	for {
		// Wait for the next event at most one keep-alive interval; on an
		// idle stream send a comment instead (no goroutine per stream).
		wctx, cancel := context.WithTimeout(ctx, keepAlive)
		ev, ok := st.Next(wctx)
		idle := !ok && ctx.Err() == nil && wctx.Err() != nil
		cancel()
		switch {
		case idle:
			if err := sw.Comment("keep-alive"); err != nil {
				return
			}
		case !ok:
			return
		default:
			// The event's sequence number is its SSE id, which a client
			// resumes after with Last-Event-ID (RPC-17).
			if err := sw.Event(strconv.FormatUint(st.Seq(), 10), render(ev)); err != nil {
				return
			}
		}
	}
}
