package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// rpcResponse is a JSON-RPC response as the WebSocket and stdio carriers
// send it (the payload of a frame, a stdout line).
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// wsFrame is a server frame of the WebSocket binding (XPORT-3).
type wsFrame struct {
	ID      json.RawMessage `json:"id"`
	Payload *rpcResponse    `json:"payload"`
	Final   bool            `json:"final"`
	raw     string
}

// wsTestConn is a test client over one real WebSocket connection: a
// reader goroutine records every frame in arrival order.
type wsTestConn struct {
	t      *testing.T
	c      *websocket.Conn
	mu     sync.Mutex
	frames []wsFrame
	notify chan struct{}
	done   chan struct{}
	err    error
}

// dialWS connects to url with the given headers; it fails the test unless
// the upgrade succeeds.
func dialWS(t *testing.T, url string, hdr http.Header, client *http.Client) *wsTestConn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: hdr, HTTPClient: client})
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %s: %v (status %d)", url, err, status)
	}
	c.SetReadLimit(64 << 20)
	w := &wsTestConn{t: t, c: c, notify: make(chan struct{}, 1), done: make(chan struct{})}
	go w.read()
	t.Cleanup(func() { _ = c.CloseNow() })
	return w
}

func (w *wsTestConn) read() {
	defer close(w.done)
	for {
		_, b, err := w.c.Read(context.Background())
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
		var f wsFrame
		if err := json.Unmarshal(b, &f); err != nil {
			f.Final = true
		}
		f.raw = string(b)
		w.mu.Lock()
		w.frames = append(w.frames, f)
		w.mu.Unlock()
		select {
		case w.notify <- struct{}{}:
		default:
		}
	}
}

// send writes one text message.
func (w *wsTestConn) send(msg string) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := w.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		w.t.Fatalf("write: %v", err)
	}
}

// request sends a request frame with frame id id for method and params.
func (w *wsTestConn) request(id, method string, params any, headers map[string]string) {
	w.t.Helper()
	f := map[string]any{"id": id, "payload": map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}}
	if headers != nil {
		f["headers"] = headers
	}
	b, _ := json.Marshal(f)
	w.send(string(b))
}

// waitFinal waits for the final frame of frame id id (a JSON string id
// such as `"a"`, or `null`) and returns all frames of that id.
func (w *wsTestConn) waitFinal(id string, d time.Duration) []wsFrame {
	w.t.Helper()
	deadline := time.After(d)
	for {
		w.mu.Lock()
		var got []wsFrame
		final := false
		for _, f := range w.frames {
			if string(f.ID) == id {
				got = append(got, f)
				final = final || f.Final
			}
		}
		err := w.err
		w.mu.Unlock()
		if final {
			return got
		}
		if err != nil {
			w.t.Fatalf("connection ended before the final frame of %s: %v (frames %v)", id, err, got)
		}
		select {
		case <-w.notify:
		case <-deadline:
			w.t.Fatalf("no final frame for %s within %s; frames so far: %v", id, d, got)
		}
	}
}

// all returns the frames received so far, in order.
func (w *wsTestConn) all() []wsFrame {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]wsFrame(nil), w.frames...)
}

// closed waits for the connection to end and returns the read error.
func (w *wsTestConn) closed(d time.Duration) error {
	w.t.Helper()
	select {
	case <-w.done:
	case <-time.After(d):
		w.t.Fatalf("the connection did not end within %s", d)
	}
	return w.err
}

// wsMessage is SendMessage params with one text part.
func wsMessage(text string) map[string]any {
	return map[string]any{"message": map[string]any{
		"role": "ROLE_USER", "messageId": fmt.Sprintf("m-%d", time.Now().UnixNano()),
		"parts": []any{map[string]any{"text": text}},
	}}
}

// wsURL turns an http base URL into the ws URL of path.
func wsURL(base, path string) string {
	return "ws://" + strings.TrimPrefix(base, "http://") + path
}

// waitFrames waits until id has at least n frames.
func waitFrames(t *testing.T, w *wsTestConn, id string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		got := 0
		for _, f := range w.all() {
			if string(f.ID) == id {
				got++
			}
		}
		if got >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("fewer than %d frames for %s", n, id)
}
