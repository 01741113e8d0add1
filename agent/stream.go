package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Stream is an ordered sequence of StreamResponse events.
type Stream interface {
	// Next returns the next event; false when the stream has ended or ctx is done.
	Next(ctx context.Context) (a2a.StreamResponse, bool)
	// Close releases the stream; the task itself is not affected, except
	// that with Config.CancelOnDisconnect closing a SendStreamingMessage
	// stream before its end cancels the turn (the client went away).
	Close()
	// Detach releases the stream without ever canceling the turn: for a
	// binding whose caller never listened (a JSON-RPC notification).
	Detach()
}

// runStream is a Stream over a run's subscriber, preceded by a first event.
type runStream struct {
	first         *a2a.Task
	sub           store.Subscription
	run           *run
	cancelOnClose bool
	ended         bool
}

func (rs *runStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	if rs.first != nil {
		t := rs.first
		rs.first = nil
		return a2a.StreamResponse{Task: t}, true
	}
	if rs.sub == nil {
		return a2a.StreamResponse{}, false
	}
	ev, ok := rs.sub.Next(ctx)
	if !ok && ctx.Err() == nil {
		rs.ended = true
	}
	return ev.Response, ok
}

// Detach implements Stream.
func (rs *runStream) Detach() {
	rs.cancelOnClose = false
	rs.Close()
}

// Detach implements Stream: a waiting stream never cancels a turn.
func (ws *waitStream) Detach() { ws.Close() }

func (rs *runStream) Close() {
	if rs.sub != nil {
		rs.run.unsubscribe(rs.sub)
		if rs.cancelOnClose && !rs.ended {
			rs.run.cancel(errCanceledByClient)
		}
	}
}
