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
	// Seq returns the sequence number of the event Next returned last
	// (RPC-17: the SSE id, which a client resumes after with Last-Event-ID):
	// a status or artifact update's own number in its task's log, or for a
	// Task snapshot the number of the last event it reflects (0 when the
	// task has none yet).
	Seq() uint64
	// Close releases the stream; the task itself is not affected, except
	// that with Config.CancelOnDisconnect closing a SendStreamingMessage
	// stream before its end cancels the turn (the client went away).
	Close()
	// Detach releases the stream without ever canceling the turn: for a
	// binding whose caller never listened (a JSON-RPC notification).
	Detach()
	// Buffered and Ready tell a binding which events are at hand, so it
	// writes them back to back and flushes once, and let it wait for the
	// next one in its own select (see store.Buffered). A stream that
	// cannot tell says false and nil: the binding then waits in Next.
	store.Buffered
}

// runStream is a Stream over a run's subscriber, preceded by a first event
// (a Task snapshot at firstSeq) and by replayed events, each optional.
type runStream struct {
	first         *a2a.Task
	firstSeq      uint64
	replay        []store.Event
	sub           store.Subscription
	run           *run
	cancelOnClose bool
	ended         bool
	seq           uint64
}

func (rs *runStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	if rs.first != nil {
		t := rs.first
		rs.first, rs.seq = nil, rs.firstSeq
		return a2a.StreamResponse{Task: t}, true
	}
	if len(rs.replay) > 0 {
		ev := rs.replay[0]
		rs.replay, rs.seq = rs.replay[1:], ev.Seq
		return ev.Response, true
	}
	if rs.sub == nil {
		return a2a.StreamResponse{}, false
	}
	ev, ok := rs.sub.Next(ctx)
	if !ok && ctx.Err() == nil {
		rs.ended = true
	}
	if ok {
		rs.seq = ev.Seq
	}
	return ev.Response, ok
}

// Seq implements Stream.
func (rs *runStream) Seq() uint64 { return rs.seq }

// Buffered reports whether Next would return without waiting: the first
// event or a replayed one is pending, there is no subscription, or it has
// an event or has ended (when it can tell, see store.Buffered). The
// bindings write such events back to back and flush them once.
func (rs *runStream) Buffered() bool {
	if rs.first != nil || len(rs.replay) > 0 || rs.sub == nil {
		return true
	}
	return rs.sub.Buffered()
}

// Ready returns a channel that receives when Buffered may have become true
// (see store.Buffered), or nil when the stream cannot be waited on that
// way: the bindings then wait in Next.
func (rs *runStream) Ready() <-chan struct{} {
	if rs.sub == nil {
		return nil
	}
	return rs.sub.Ready()
}

// Detach implements Stream.
func (rs *runStream) Detach() {
	rs.cancelOnClose = false
	rs.Close()
}

// Detach implements Stream: a waiting stream never cancels a turn.
func (ws *waitStream) Detach() { ws.Close() }

// Buffered implements Stream: a waiting stream cannot tell.
func (ws *waitStream) Buffered() bool { return false }

// Ready implements Stream: a waiting stream is waited on in Next.
func (ws *waitStream) Ready() <-chan struct{} { return nil }

func (rs *runStream) Close() {
	if rs.sub != nil {
		rs.run.unsubscribe(rs.sub)
		if rs.cancelOnClose && !rs.ended {
			rs.run.cancel(errCanceledByClient)
		}
	}
}
