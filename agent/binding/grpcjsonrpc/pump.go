package grpcjsonrpc

import (
	"context"
	"encoding/json"
	"time"

	"google.golang.org/grpc/status"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// endGrace is how long an event that may be a stream's last (see mayEnd)
// is held to see whether the stream ends after it: then it goes out as
// the final envelope. A stream ends right after its last event, so the
// wait is short in practice; an event followed by none within it (a
// SubscribeToTask snapshot of a task waiting for input, which stays open)
// is sent on as an ordinary envelope.
const endGrace = 250 * time.Millisecond

// mayEnd reports whether ev may be the last event of a stream: a direct
// message, or a task or status in a terminal or interrupted state (A2A
// 1.0 ends streams there). Other events are sent at once.
func mayEnd(ev a2a.StreamResponse) bool {
	switch {
	case ev.Message != nil:
		return true
	case ev.Task != nil:
		return ev.Task.Status.State.Terminal() || ev.Task.Status.State.Interrupted()
	case ev.StatusUpdate != nil:
		return ev.StatusUpdate.Status.State.Terminal() || ev.StatusUpdate.Status.State.Interrupted()
	}
	return false
}

// pump sends every event of st as an envelope until the stream ends, ctx
// ends or a send fails, then releases the stream (closed: with
// CancelOnDisconnect a turn whose caller went away is canceled) before
// the final envelope, in the order of jsonrpc.Dispatcher.Pump. The final
// envelope is the last event's, with "final": true added to its payload,
// when that event was held (mayEnd); else the end frame
// {"jsonrpc":"2.0","id":…,"final":true}. A caller gone mid-stream gets no
// final envelope.
func pump(ctx context.Context, st agent.Stream, id json.RawMessage, send func(payload []byte, final bool) error) error {
	rctx, stop := context.WithCancel(ctx)
	events := make(chan a2a.StreamResponse)
	go func() { // the only caller of st.Next
		defer close(events)
		for {
			ev, ok := st.Next(rctx)
			if !ok {
				return
			}
			select {
			case events <- ev:
			case <-rctx.Done():
				return
			}
		}
	}()
	held, err := forward(events, id, send)
	stop()
	for range events { // the reader has stopped calling Next
	}
	st.Close()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if held != nil {
		return send(withFinal(held), true)
	}
	return send(jsonrpc.EndFrame(id), true)
}

// forward sends the events as they come, holding one that may be the
// last for endGrace; it returns the frame still held when the events end,
// or the first send error.
func forward(events <-chan a2a.StreamResponse, id json.RawMessage, send func([]byte, bool) error) ([]byte, error) {
	var held []byte
	timer := time.NewTimer(endGrace)
	timer.Stop()
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return held, nil
			}
			if held != nil {
				timer.Stop()
				if err := send(held, false); err != nil {
					return nil, err
				}
				held = nil
			}
			frame := jsonrpc.EventFrame(id, ev)
			if mayEnd(ev) {
				held = frame
				timer.Reset(endGrace)
				continue
			}
			if err := send(frame, false); err != nil {
				return nil, err
			}
		case <-timer.C:
			if held != nil {
				if err := send(held, false); err != nil {
					return nil, err
				}
				held = nil
			}
		}
	}
}

// withFinal adds the member "final": true to an encoded JSON-RPC
// response object (what the seed system's client reads on the last
// envelope of a stream).
func withFinal(frame []byte) []byte {
	end := len(frame) - 1
	for end >= 0 && frame[end] != '}' {
		end--
	}
	if end < 0 {
		return frame
	}
	out := make([]byte, 0, len(frame)+len(`,"final":true`))
	out = append(out, frame[:end]...)
	out = append(out, `,"final":true`...)
	return append(out, frame[end:]...)
}
