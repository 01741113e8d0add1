package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

// wsMux is one WebSocket connection (XPORT-3) carrying many requests at
// once, told apart by frame id.
type wsMux struct {
	c       *websocket.Conn
	mu      sync.Mutex
	waiters map[string]chan wsBenchFrame
	ids     atomic.Int64
}

// wsBenchFrame is the part of a server frame the bench reads.
type wsBenchFrame struct {
	ID      json.RawMessage `json:"id"`
	Payload json.RawMessage `json:"payload"`
	Final   bool            `json:"final"`
}

// dialWSMux connects to the fast site's /ws with the bench token.
func dialWSMux(base string) (*wsMux, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := "ws://" + strings.TrimPrefix(base, "http://") + "/ws"
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{
		"Authorization": {"Bearer " + benchToken}, "A2A-Version": {"1.0"},
	}})
	if err != nil {
		return nil, err
	}
	c.SetReadLimit(8 << 20)
	m := &wsMux{c: c, waiters: map[string]chan wsBenchFrame{}}
	go m.read()
	return m, nil
}

func (m *wsMux) read() {
	for {
		_, b, err := m.c.Read(context.Background())
		if err != nil {
			m.mu.Lock()
			for _, ch := range m.waiters {
				close(ch)
			}
			m.waiters = map[string]chan wsBenchFrame{}
			m.mu.Unlock()
			return
		}
		f, ok := parseBenchFrame(b)
		if !ok {
			continue
		}
		m.mu.Lock()
		ch := m.waiters[string(f.ID)]
		m.mu.Unlock()
		if ch != nil {
			ch <- f
		}
	}
}

// parseBenchFrame reads a server frame the way the SSE scenario reads an
// event (no full JSON decode): the gateway writes {"id":…,"payload":…,
// "final":…} in that order; anything else is decoded as JSON.
func parseBenchFrame(b []byte) (wsBenchFrame, bool) {
	const head, mid = `{"id":`, `,"payload":`
	if bytes.HasPrefix(b, []byte(head)) {
		rest := b[len(head):]
		if i := bytes.IndexByte(rest, ','); i > 0 {
			f := wsBenchFrame{ID: rest[:i], Final: bytes.HasSuffix(b, []byte(`"final":true}`))}
			if bytes.HasPrefix(rest[i:], []byte(mid)) {
				f.Payload = rest[i+len(mid) : len(rest)-len(`,"final":false}`)+boolLenDiff(f.Final)]
			}
			return f, true
		}
	}
	var f wsBenchFrame
	return f, json.Unmarshal(b, &f) == nil
}

// boolLenDiff corrects the payload end for `true` being one byte shorter
// than `false`.
func boolLenDiff(final bool) int {
	if final {
		return 1
	}
	return 0
}

// call sends one request with payload and calls each for every frame
// until the final one; it returns the number of frames that carried a
// payload.
func (m *wsMux) call(payload []byte, each func(wsBenchFrame)) (int, error) {
	id := `"` + strconv.FormatInt(m.ids.Add(1), 10) + `"`
	ch := make(chan wsBenchFrame, 64)
	m.mu.Lock()
	m.waiters[id] = ch
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		delete(m.waiters, id)
		m.mu.Unlock()
	}()
	frame := `{"id":` + id + `,"payload":` + string(payload) + `}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		return 0, err
	}
	n := 0
	for {
		select {
		case f, ok := <-ch:
			if !ok {
				return n, fmt.Errorf("connection closed")
			}
			if f.Payload != nil {
				n++
				each(f)
			}
			if f.Final {
				return n, nil
			}
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
}

// wsSendMessage measures SendMessage over one WebSocket connection with
// r.concurrency requests in flight, next to JSON-RPC over HTTP (XPORT-3).
func (r *runner) wsSendMessage() []result {
	m, err := dialWSMux(r.fast)
	if err != nil {
		return []result{{name: "SendMessage over WebSocket (1 connection)", errors: 1, extra: err.Error()}}
	}
	defer m.c.CloseNow()
	res := r.drive(fmt.Sprintf("SendMessage over WebSocket (1 connection, %d in flight)", r.concurrency), r.concurrency, r.duration, func(*http.Client, int, int) (string, error) {
		// Built per send: a fresh messageId, so each request is a turn.
		body := rpcBody("SendMessage", sendParams("Create a VPC with two vSwitches.", ""))
		var last []byte
		_, err := m.call(body, func(f wsBenchFrame) { last = f.Payload })
		if err != nil {
			return "", err
		}
		if !strings.Contains(string(last), "TASK_STATE_INPUT_REQUIRED") {
			return "", fmt.Errorf("unexpected answer")
		}
		return taskIDOf(last), nil
	})
	res.ratioTo = []string{"SendMessage (echo, durable store, auth)", "baseline: Caddy respond"}
	return []result{res}
}

// wsStreamMessage measures SendStreamingMessage over one WebSocket
// connection and its event rate against SSE's of the same run.
func (r *runner) wsStreamMessage() []result {
	m, err := dialWSMux(r.fast)
	if err != nil {
		return []result{{name: "SendStreamingMessage over WebSocket", errors: 1, extra: err.Error()}}
	}
	defer m.c.CloseNow()
	var events atomic.Int64
	res := r.drive(fmt.Sprintf("SendStreamingMessage over WebSocket (1 connection, %d in flight)", r.concurrency), r.concurrency, r.duration, func(*http.Client, int, int) (string, error) {
		body := rpcBody("SendStreamingMessage", sendParams("Create a VPC with two vSwitches.", ""))
		last := ""
		n, err := m.call(body, func(f wsBenchFrame) { last = string(f.Payload) })
		if err == nil && !strings.Contains(last, "TASK_STATE_INPUT_REQUIRED") {
			err = fmt.Errorf("stream did not end input-required")
		}
		if err != nil {
			return "", err
		}
		events.Add(int64(n))
		return taskIDOf([]byte(last)), nil
	})
	rate := float64(events.Load()) / res.elapsed.Seconds()
	res.extra = fmt.Sprintf("%.0f events/s", rate)
	if sse := r.sseEventRate(); sse > 0 {
		res.extra += fmt.Sprintf(" (%.2f× SSE events/s)", rate/sse)
	}
	res.ratioTo = []string{"SendStreamingMessage (streams)"}
	return []result{res}
}

// sseEventRate is the events/s of this run's SSE stream scenario (0 when
// it did not run).
func (r *runner) sseEventRate() float64 {
	for _, res := range r.results {
		if res.name == "SendStreamingMessage (streams)" {
			var v float64
			if _, err := fmt.Sscanf(res.extra, "%f events/s", &v); err == nil {
				return v
			}
		}
	}
	return 0
}
