package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// streamClient opens streams: no overall timeout, a stream lasts until
// it ends or is closed.
var streamClient = &http.Client{}

// Event is one event of a stream.
type Event struct {
	// ID is the JSON-RPC response id; nil on an HTTP+JSON stream.
	ID json.RawMessage
	// Data is the StreamResponse as sent: the JSON-RPC result, or the
	// whole data of an HTTP+JSON event; nil on a JSON-RPC error event.
	Data json.RawMessage
	// Error is the JSON-RPC error object, nil when none.
	Error map[string]any
	// Map is Data decoded, or {"error": Error} for an error event.
	Map map[string]any
	// SSEID is the id the event's id line set ("" when it set none, or
	// repeated the stream's last event ID; RPC-17).
	SSEID string
}

type streamItem struct {
	ev  Event
	err error
}

// Stream is an open SSE response, read in the background (so that the
// server never waits on the test) into a queue of decoded events. It is
// closed at the end of the test at the latest. Not for concurrent use.
type Stream struct {
	// Header is the response's header (A2A-Extensions echo, RPC-3).
	Header http.Header
	t      testing.TB
	rpc    bool
	cancel context.CancelFunc
	items  chan streamItem
	ended  bool
	once   sync.Once
}

// Stream opens a JSON-RPC streaming call (SendStreamingMessage,
// SubscribeToTask) on the endpoint. It fails the test unless the answer
// is HTTP 200 text/event-stream.
func (e Endpoint) Stream(t testing.TB, method string, params any, opts ...Option) *Stream {
	t.Helper()
	opts = e.with(opts)
	return openStream(t, http.MethodPost, e.url, Envelope(method, params, opts...), true, opts)
}

// StreamHTTP opens an HTTP+JSON stream on the endpoint's URL (e.g. POST
// /message:stream, GET /tasks/ID:subscribe; body "" for none). It fails
// the test unless the answer is HTTP 200 text/event-stream.
func (e Endpoint) StreamHTTP(t testing.TB, method, body string, opts ...Option) *Stream {
	t.Helper()
	return openStream(t, method, e.url, body, false, e.with(opts))
}

func openStream(t testing.TB, method, url, body string, rpc bool, opts []Option) *Stream {
	t.Helper()
	o := options(opts)
	if o.client == client {
		o.client = streamClient
	}
	ctx, cancel := context.WithCancel(context.Background())
	req, err := o.newRequest(ctx, method, url, body, "Accept", "text/event-stream")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != http.StatusOK || !strings.HasPrefix(ct, "text/event-stream") {
		b := make([]byte, 64<<10)
		n, _ := resp.Body.Read(b)
		resp.Body.Close()
		cancel()
		t.Fatalf("%s %s: HTTP %d %q, want an event stream: %s", method, url, resp.StatusCode, ct, b[:n])
	}
	s := &Stream{Header: resp.Header, t: t, rpc: rpc, cancel: cancel, items: make(chan streamItem, 4096)}
	go s.read(ctx, resp)
	t.Cleanup(s.Close)
	return s
}

// read queues the events of resp until its end, read by internal/sse
// (events of up to maxReply bytes). An event's SSEID is the id it set:
// the stream's last event ID when that changed at this event, else "".
func (s *Stream) read(ctx context.Context, resp *http.Response) {
	defer close(s.items)
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body, maxReply)
	last := ""
	for {
		ev, err := r.Next()
		if err != nil {
			return
		}
		it := s.decode(string(ev.Data))
		if ev.ID != last {
			it.ev.SSEID, last = ev.ID, ev.ID
		}
		select {
		case s.items <- it:
		case <-ctx.Done():
			return
		}
	}
}

// decode turns one event's data into an Event.
func (s *Stream) decode(data string) streamItem {
	var ev Event
	if s.rpc {
		var env struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  map[string]any  `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &env); err != nil {
			return streamItem{err: fmt.Errorf("data is not JSON-RPC: %v: %s", err, data)}
		}
		ev.ID, ev.Error = env.ID, env.Error
		if env.Error != nil {
			ev.Map = map[string]any{"error": env.Error}
			return streamItem{ev: ev}
		}
		ev.Data = env.Result
	} else {
		ev.Data = json.RawMessage(data)
	}
	if err := json.Unmarshal(ev.Data, &ev.Map); err != nil {
		return streamItem{err: fmt.Errorf("event is not a JSON object: %v: %s", err, ev.Data)}
	}
	return streamItem{ev: ev}
}

// wait returns the next item, ok false at the end of the stream, timedOut
// when nothing came within d.
func (s *Stream) wait(d time.Duration) (it streamItem, ok, timedOut bool) {
	if s.ended {
		return streamItem{}, false, false
	}
	select {
	case it, ok = <-s.items:
		s.ended = !ok
		return it, ok, false
	default:
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case it, ok = <-s.items:
		s.ended = !ok
		return it, ok, false
	case <-timer.C:
		return streamItem{}, false, true
	}
}

// NextEvent returns the next event, or false at the end of the stream. It
// fails the test when nothing arrives within d or the data is not JSON.
func (s *Stream) NextEvent(d time.Duration) (Event, bool) {
	s.t.Helper()
	it, ok, timedOut := s.wait(d)
	if timedOut {
		s.t.Fatalf("stream: no event within %v", d)
	}
	if it.err != nil {
		s.t.Fatalf("stream: %v", it.err)
	}
	return it.ev, ok
}

// Next is NextEvent returning the event's Map.
func (s *Stream) Next(d time.Duration) (map[string]any, bool) {
	s.t.Helper()
	ev, ok := s.NextEvent(d)
	return ev.Map, ok
}

// Take reads the next n events, each within d, and returns them; it fails
// the test when the stream ends first (or as NextEvent does).
func (s *Stream) Take(n int, d time.Duration) []Event {
	s.t.Helper()
	var out []Event
	for len(out) < n {
		ev, ok := s.NextEvent(d)
		if !ok {
			s.t.Fatalf("stream ended after %d events, want %d: %v", len(out), n, out)
		}
		out = append(out, ev)
	}
	return out
}

// RestEvents reads the stream to its end and returns the events; it fails
// the test when the stream has not ended within d.
func (s *Stream) RestEvents(d time.Duration) []Event {
	s.t.Helper()
	var out []Event
	deadline := time.Now().Add(d)
	for {
		it, ok, timedOut := s.wait(time.Until(deadline))
		if timedOut {
			s.Close()
			s.t.Fatalf("stream did not end within %v; got %d events", d, len(out))
		}
		if it.err != nil {
			s.t.Fatalf("stream: %v", it.err)
		}
		if !ok {
			return out
		}
		out = append(out, it.ev)
	}
}

// Rest is RestEvents returning the events' Maps.
func (s *Stream) Rest(d time.Duration) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	for _, ev := range s.RestEvents(d) {
		out = append(out, ev.Map)
	}
	return out
}

// Until reads events until cond holds for one and returns the events read
// (the last is that one). It fails the test with "stream ended before
// what" when the stream ends first, and with "what did not happen within
// d" when d passes first.
func (s *Stream) Until(d time.Duration, what string, cond func(ev map[string]any) bool) []map[string]any {
	s.t.Helper()
	var out []map[string]any
	deadline := time.Now().Add(d)
	for {
		it, ok, timedOut := s.wait(time.Until(deadline))
		switch {
		case timedOut:
			s.t.Fatalf("%s did not happen within %v (%d events)", what, d, len(out))
		case it.err != nil:
			s.t.Fatalf("stream: %v", it.err)
		case !ok:
			s.t.Fatalf("stream ended before %s (%d events)", what, len(out))
		}
		out = append(out, it.ev.Map)
		if cond(it.ev.Map) {
			return out
		}
	}
}

// Within reads the events that arrive within d and reports whether the
// stream ended meanwhile; d passing is no failure.
func (s *Stream) Within(d time.Duration) (events []Event, ended bool) {
	s.t.Helper()
	deadline := time.Now().Add(d)
	for {
		it, ok, timedOut := s.wait(time.Until(deadline))
		switch {
		case timedOut:
			return events, false
		case it.err != nil:
			s.t.Fatalf("stream: %v", it.err)
		case !ok:
			return events, true
		}
		events = append(events, it.ev)
	}
}

// Close ends the stream; events not read yet are dropped. Safe to call
// twice.
func (s *Stream) Close() {
	s.once.Do(s.cancel)
}
