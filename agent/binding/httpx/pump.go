package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// pump writes every event of st, each rendered by render, with keep-alive
// comments while idle, until the stream ends or the client goes away.
func (h *Handler) pump(ctx context.Context, sw *sse.Writer, st Stream, render func(any) []byte) {
	defer st.Close()
	defer h.svc.StreamOpened()()
	every := h.tc.KeepAlive
	for {
		// Wait for the next event at most one keep-alive interval; on an
		// idle stream send a comment instead (no goroutine per stream).
		wctx, cancel := context.WithTimeout(ctx, every)
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
			if err := sw.Data(render(ev)); err != nil {
				return
			}
		}
	}
}
