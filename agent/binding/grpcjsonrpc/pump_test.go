package grpcjsonrpc

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// chanStream is an agent.Stream over a channel of events (closed: the
// stream ended).
type chanStream struct {
	ch     chan a2a.StreamResponse
	closed bool
}

func (s *chanStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	select {
	case ev, ok := <-s.ch:
		return ev, ok
	case <-ctx.Done():
		return a2a.StreamResponse{}, false
	}
}
func (s *chanStream) Seq() uint64            { return 0 }
func (s *chanStream) Close()                 { s.closed = true }
func (s *chanStream) Detach()                { s.closed = true }
func (s *chanStream) Buffered() bool         { return false }
func (s *chanStream) Ready() <-chan struct{} { return nil }
func statusEv(st a2a.TaskState) a2a.StreamResponse {
	return a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", Status: a2a.TaskStatus{State: st}}}
}

type sent struct {
	payload map[string]any
	final   bool
	at      time.Time
}

func runPump(t *testing.T, st *chanStream) ([]sent, error) {
	t.Helper()
	var out []sent
	err := pump(context.Background(), st, json.RawMessage("7"), func(p []byte, final bool) error {
		var m map[string]any
		if err := json.Unmarshal(p, &m); err != nil {
			t.Fatalf("payload %q is not an object: %v", p, err)
		}
		out = append(out, sent{m, final, time.Now()})
		return nil
	})
	if !st.closed {
		t.Fatal("the stream was not released")
	}
	return out, err
}

// XPORT-6: the last event is the final envelope, "final": true added to
// its payload; the envelopes before it are not final.
func TestPumpLastEventIsFinal(t *testing.T) {
	st := &chanStream{ch: make(chan a2a.StreamResponse, 3)}
	st.ch <- statusEv(a2a.TaskStateWorking)
	st.ch <- statusEv(a2a.TaskStateWorking)
	st.ch <- statusEv(a2a.TaskStateCompleted)
	close(st.ch)
	out, err := runPump(t, st)
	if err != nil || len(out) != 3 {
		t.Fatalf("%d envelopes, %v; want 3", len(out), err)
	}
	for i, s := range out {
		last := i == 2
		if s.final != last || (s.payload["final"] == true) != last || s.payload["result"] == nil || s.payload["id"] != float64(7) {
			t.Fatalf("envelope %d: final %v payload %v", i, s.final, s.payload)
		}
	}
}

// A stream that ends after an event that cannot be its last (or with no
// event) ends with the end frame.
func TestPumpEndFrame(t *testing.T) {
	st := &chanStream{ch: make(chan a2a.StreamResponse, 1)}
	st.ch <- statusEv(a2a.TaskStateWorking)
	close(st.ch)
	out, err := runPump(t, st)
	if err != nil || len(out) != 2 || out[0].final || !out[1].final || out[1].payload["result"] != nil || out[1].payload["final"] != true {
		t.Fatalf("envelopes %+v, %v; want the event, then the end frame", out, err)
	}
}

// An event that may end the stream but does not (a subscription to a task
// waiting for input stays open) is sent after endGrace, not held until
// the stream's end.
func TestPumpHeldEventGoesOutAfterGrace(t *testing.T) {
	st := &chanStream{ch: make(chan a2a.StreamResponse)}
	start := time.Now()
	go func() {
		st.ch <- statusEv(a2a.TaskStateInputRequired)
		time.Sleep(endGrace * 4)
		close(st.ch)
	}()
	out, err := runPump(t, st)
	if err != nil || len(out) != 2 || out[0].final || !out[1].final || out[1].payload["result"] != nil {
		t.Fatalf("envelopes %+v, %v; want the event, then the end frame", out, err)
	}
	if d := out[0].at.Sub(start); d < endGrace || d > endGrace*3 {
		t.Fatalf("the held event went out after %v, want about %v", d, endGrace)
	}
}

func TestWithFinal(t *testing.T) {
	got := string(withFinal([]byte(`{"jsonrpc":"2.0","id":1,"result":{"a":1}}`)))
	if got != `{"jsonrpc":"2.0","id":1,"result":{"a":1},"final":true}` {
		t.Fatal(got)
	}
}
