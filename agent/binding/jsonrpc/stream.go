package jsonrpc

import (
	"context"
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent"
)

// Carrier is how a frame-based carrier (WebSocket, stdio, Redis Streams)
// writes the frames of one stream for Dispatcher.Pump.
type Carrier struct {
	// Send writes one event's frame (from EventFrame, which the carrier
	// may wrap in its own envelope). An error ends the stream at once:
	// no final frame follows, and Pump returns the error.
	Send func(frame []byte) error
	// Final writes the end of the stream (EndFrame, or the carrier's own
	// end marker); stopped says ctx ended before the stream did. Its error
	// is Pump's.
	Final func(id json.RawMessage, stopped bool) error
	// Released, when set, runs once the stream is released and before
	// Final (WebSocket frees the request's in-flight slot there).
	Released func()
	// DetachOnStop detaches the stream rather than closing it when ctx
	// ends or a Send fails, so the turn goes on: for a carrier whose
	// request stays pending and is served again (Redis Streams).
	DetachOnStop bool
}

// Pump writes every event of out's stream through c until the stream
// ends, ctx ends or a Send fails. Then, in this one order for every
// carrier:
//
//  1. the stream is released: closed, or detached (DetachOnStop) when it
//     was stopped or a write failed; this unsubscribes it, stops counting
//     it as open (agent.NewHandler's open-stream gauge) and, with
//     CancelOnDisconnect, cancels a turn whose caller went away;
//  2. c.Released runs;
//  3. c.Final writes the end, unless a Send failed.
//
// The final frame tells the peer the request is over, so everything held
// for it is given back before: a peer that reads the final frame and
// sends its next request (or reads the open-stream gauge) finds no
// subscription, no open stream and no slot left of the last one. A peer
// gone mid-stream (its Send fails, or the carrier ends ctx) gets the same
// release, without the final frame.
func (d *Dispatcher) Pump(ctx context.Context, out Outcome, c Carrier) error {
	st := out.Stream
	err := sendEvents(ctx, st, out.ID, c.Send)
	stopped := ctx.Err() != nil
	if c.DetachOnStop && (err != nil || stopped) {
		st.Detach()
	} else {
		st.Close()
	}
	if c.Released != nil {
		c.Released()
	}
	if err != nil {
		return err
	}
	return c.Final(out.ID, stopped)
}

// sendEvents sends every event of st as EventFrame(id, ev) until the
// stream ends (or ctx does); the first failed send's error.
func sendEvents(ctx context.Context, st agent.Stream, id json.RawMessage, send func([]byte) error) error {
	for {
		ev, ok := st.Next(ctx)
		if !ok {
			return nil
		}
		if err := send(EventFrame(id, ev)); err != nil {
			return err
		}
	}
}
