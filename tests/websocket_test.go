package tests

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// wsSite is an a2a site with bearer auth and the WebSocket binding
// (XPORT-3); the echo backend answers slowly enough for streams to
// overlap.
const wsSite = `a2a {` + cardBlock + `
		auth {
			bearer ws-token
		}
		backend echo {
			chunks 4
			delay 40ms
		}
		websocket /ws {
			max_in_flight 3
		}
	}`

func wsAuth() http.Header {
	return http.Header{"Authorization": {"Bearer ws-token"}, "A2A-Version": {"1.0"}}
}

// TestWebSocketBinding drives the WebSocket binding of the built gateway
// over real connections (XPORT-3): auth on the upgrade, the card entry,
// unary methods, two streams interleaved on one connection, the parse and
// request errors, frame headers, the in-flight limit, a client cancel and
// the message size limit.
func TestWebSocketBinding(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, wsSite)
	u := wsURL(gw.URL, "/ws")

	t.Run("unauthenticated upgrade refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, resp, err := websocket.Dial(ctx, u, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unauthenticated upgrade: err %v resp %v, want 401", err, resp)
		}
		_, resp, err = websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer wrong"}}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("wrong token: err %v resp %v, want 401", err, resp)
		}
	})

	t.Run("card advertises websocket", func(t *testing.T) {
		r := harness.At(gw.URL+"/.well-known/agent-card.json").Do(t, "GET", "")
		var c struct {
			SupportedInterfaces []struct{ URL, ProtocolBinding string } `json:"supportedInterfaces"`
		}
		if err := json.Unmarshal(r.Raw, &c); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, i := range c.SupportedInterfaces {
			if i.ProtocolBinding == "websocket" {
				found = true
				if i.URL != u {
					t.Errorf("websocket interface URL %q, want %q", i.URL, u)
				}
			} else if i.URL != gw.URL+"/" {
				t.Errorf("%s interface URL %q, want %q", i.ProtocolBinding, i.URL, gw.URL+"/")
			}
		}
		if !found {
			t.Fatalf("no websocket interface in %s", r.Raw)
		}
	})

	t.Run("unary methods", func(t *testing.T) {
		w := dialWS(t, u, wsAuth(), nil)
		w.request("s1", "SendMessage", wsMessage("hello ws"), nil)
		fs := w.waitFinal(`"s1"`, 10*time.Second)
		if len(fs) != 1 || fs[0].Payload == nil || fs[0].Payload.Error != nil || string(fs[0].Payload.ID) != `"s1"` {
			t.Fatalf("SendMessage frames: %v", fs)
		}
		var res struct {
			Task struct{ ID string } `json:"task"`
		}
		if err := json.Unmarshal(fs[0].Payload.Result, &res); err != nil || res.Task.ID == "" {
			t.Fatalf("SendMessage result %s: %v", fs[0].Payload.Result, err)
		}
		w.request("g1", "GetTask", map[string]any{"id": res.Task.ID}, nil)
		if g := w.waitFinal(`"g1"`, 5*time.Second); g[0].Payload.Error != nil || !strings.Contains(string(g[0].Payload.Result), res.Task.ID) {
			t.Fatalf("GetTask: %s", g[0].raw)
		}
		w.request("l1", "ListTasks", map[string]any{}, nil)
		if l := w.waitFinal(`"l1"`, 5*time.Second); l[0].Payload.Error != nil || !strings.Contains(string(l[0].Payload.Result), res.Task.ID) {
			t.Fatalf("ListTasks: %s", l[0].raw)
		}
		w.request("c1", "CancelTask", map[string]any{"id": res.Task.ID}, nil)
		if c := w.waitFinal(`"c1"`, 10*time.Second); c[0].Payload.Error != nil || !strings.Contains(string(c[0].Payload.Result), "TASK_STATE_CANCELED") {
			t.Fatalf("CancelTask: %s", c[0].raw)
		}
		// The extended card (CARD-8) over the socket lists the binding too.
		w.request("x1", "GetExtendedAgentCard", map[string]any{}, nil)
		if x := w.waitFinal(`"x1"`, 5*time.Second); x[0].Payload.Error != nil || !strings.Contains(string(x[0].Payload.Result), `"protocolBinding":"websocket"`) || !strings.Contains(string(x[0].Payload.Result), `"bindings":["JSONRPC","HTTP+JSON","websocket"]`) {
			t.Fatalf("GetExtendedAgentCard: %s", x[0].raw)
		}
		w.request("n1", "NoSuchMethod", map[string]any{}, nil)
		if n := w.waitFinal(`"n1"`, 5*time.Second); n[0].Payload.Error == nil || n[0].Payload.Error.Code != -32601 {
			t.Fatalf("unknown method: %s", n[0].raw)
		}
	})

	t.Run("two streams interleave on one connection", func(t *testing.T) {
		w := dialWS(t, u, wsAuth(), nil)
		w.request("a", "SendStreamingMessage", wsMessage("first stream"), nil)
		w.request("b", "SendStreamingMessage", wsMessage("second stream"), nil)
		fa := w.waitFinal(`"a"`, 15*time.Second)
		fb := w.waitFinal(`"b"`, 15*time.Second)
		for name, fs := range map[string][]wsFrame{"a": fa, "b": fb} {
			if len(fs) < 4 {
				t.Fatalf("stream %s: only %d frames", name, len(fs))
			}
			last := fs[len(fs)-1]
			if !last.Final || last.Payload != nil {
				t.Errorf("stream %s: last frame %s, want {id, final:true} without payload", name, last.raw)
			}
			for _, f := range fs[:len(fs)-1] {
				if f.Final || f.Payload == nil || f.Payload.Error != nil || string(f.Payload.ID) != `"`+name+`"` {
					t.Errorf("stream %s: event frame %s", name, f.raw)
				}
			}
			if !strings.Contains(fs[len(fs)-2].raw, "TASK_STATE_INPUT_REQUIRED") {
				t.Errorf("stream %s: last event %s, want the input-required status", name, fs[len(fs)-2].raw)
			}
		}
		// Interleaved: each stream had an event before the other ended.
		order := w.all()
		firstOf, finalOf := map[string]int{}, map[string]int{}
		for i, f := range order {
			id := strings.Trim(string(f.ID), `"`)
			if _, ok := firstOf[id]; !ok {
				firstOf[id] = i
			}
			if f.Final {
				finalOf[id] = i
			}
		}
		if firstOf["b"] > finalOf["a"] || firstOf["a"] > finalOf["b"] {
			t.Errorf("streams did not interleave: first %v final %v", firstOf, finalOf)
		}
	})

	t.Run("parse and request errors", func(t *testing.T) {
		w := dialWS(t, u, wsAuth(), nil)
		w.send(`{"id": 1, "payload": `)
		f := w.waitFinal(`null`, 5*time.Second)
		if f[0].Payload == nil || f[0].Payload.Error == nil || f[0].Payload.Error.Code != -32700 || !f[0].Final {
			t.Fatalf("bad JSON: %s, want -32700", f[0].raw)
		}
		nulls := 1
		for _, tc := range []struct{ msg, id string }{
			{`[1,2]`, `null`}, {`"text"`, `null`}, {`{"id":"x","payload":[{"jsonrpc":"2.0"}]}`, `"x"`},
			{`{"id":"y"}`, `"y"`}, {`{"id":{"o":1},"payload":{}}`, `null`}, {`{"id":"h","payload":{},"headers":{"A2A-Version":1}}`, `"h"`},
		} {
			w.send(tc.msg)
			var fs []wsFrame
			if tc.id == "null" {
				nulls++
				waitFrames(t, w, "null", nulls)
				for _, f := range w.all() {
					if string(f.ID) == "null" {
						fs = append(fs, f)
					}
				}
			} else {
				fs = w.waitFinal(tc.id, 5*time.Second)
			}
			got := fs[len(fs)-1]
			if got.Payload == nil || got.Payload.Error == nil || got.Payload.Error.Code != -32600 || !got.Final {
				t.Errorf("message %s: answer %s, want a final -32600 frame", tc.msg, got.raw)
			}
		}
		// A bad payload envelope is the dispatcher's -32600 too.
		w.send(`{"id":"z","payload":{"jsonrpc":"1.0","id":"z","method":"GetTask"}}`)
		if z := w.waitFinal(`"z"`, 5*time.Second); z[0].Payload.Error == nil || z[0].Payload.Error.Code != -32600 {
			t.Errorf("bad envelope: %s", z[0].raw)
		}
		// The connection survives the errors.
		w.request("ok", "ListTasks", map[string]any{}, nil)
		if ok := w.waitFinal(`"ok"`, 5*time.Second); ok[0].Payload.Error != nil {
			t.Errorf("after errors: %s", ok[0].raw)
		}
	})

	t.Run("frame headers carry the version", func(t *testing.T) {
		// The upgrade carries no A2A-Version: a frame's headers set it.
		w := dialWS(t, u, http.Header{"Authorization": {"Bearer ws-token"}}, nil)
		w.request("v0", "ListTasks", map[string]any{}, nil)
		if v := w.waitFinal(`"v0"`, 5*time.Second); v[0].Payload.Error == nil || v[0].Payload.Error.Code != -32009 {
			t.Errorf("no version at all: %s, want -32009", v[0].raw)
		}
		w.request("v1", "ListTasks", map[string]any{}, map[string]string{"A2A-Version": "1.0"})
		if v := w.waitFinal(`"v1"`, 5*time.Second); v[0].Payload.Error != nil {
			t.Errorf("version 1.0 in headers: %s", v[0].raw)
		}
		w2 := dialWS(t, u, wsAuth(), nil)
		w2.request("v2", "ListTasks", map[string]any{}, map[string]string{"a2a-version": "0.3"})
		if v := w2.waitFinal(`"v2"`, 5*time.Second); v[0].Payload.Error == nil || v[0].Payload.Error.Code != -32009 {
			t.Errorf("wrong version in headers: %s, want -32009", v[0].raw)
		}
	})

	t.Run("in-flight limit and cancel", func(t *testing.T) {
		w := dialWS(t, u, wsAuth(), nil)
		long := wsMessage(strings.Repeat("word ", 40))
		for _, id := range []string{"p1", "p2", "p3"} {
			w.request(id, "SendStreamingMessage", long, nil)
		}
		w.request("p4", "ListTasks", map[string]any{}, nil)
		p4 := w.waitFinal(`"p4"`, 5*time.Second)
		if p4[0].Payload.Error == nil || p4[0].Payload.Error.Code != -32600 || !strings.Contains(p4[0].Payload.Error.Message, "in flight") {
			t.Fatalf("request beyond max_in_flight: %s", p4[0].raw)
		}
		waitFrames(t, w, `"p1"`, 2) // the stream is open and has events
		w.send(`{"id":"p1","cancel":true}`)
		p1 := w.waitFinal(`"p1"`, 5*time.Second)
		if last := p1[len(p1)-1]; !last.Final || last.Payload != nil {
			t.Errorf("canceled stream's last frame %s", last.raw)
		}
		w.request("p5", "ListTasks", map[string]any{}, nil)
		if p5 := w.waitFinal(`"p5"`, 5*time.Second); p5[0].Payload.Error != nil {
			t.Errorf("after a cancel frees a slot: %s", p5[0].raw)
		}
	})

	t.Run("a 10 MiB frame closes with 1009", func(t *testing.T) {
		w := dialWS(t, u, wsAuth(), nil)
		big := `{"id":"big","payload":{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"x":"` + strings.Repeat("a", 10<<20) + `"}}}`
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = w.c.Write(ctx, websocket.MessageText, []byte(big)) // may fail once the server closes
		err := w.closed(15 * time.Second)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusMessageTooBig {
			t.Fatalf("read after a 10 MiB frame: %v, want close status 1009", err)
		}
	})
}

// TestWebSocketFrameExtensions: a frame's A2A-Extensions header activates
// a required extension for that request (RPC-3 over XPORT-3), else the
// upgrade's applies; without either the request is refused with -32008.
func TestWebSocketFrameExtensions(t *testing.T) {
	t.Parallel()
	const ext = "urn:example:required:v1"
	gw := harness.StartGateway(t, `a2a {
	card {
		name ws-ext
		extension `+ext+` required
	}
	websocket
}`)
	u := wsURL(gw.URL, "/ws")
	w := dialWS(t, u, http.Header{"A2A-Version": {"1.0"}}, nil)
	w.request("e0", "ListTasks", map[string]any{}, nil)
	if f := w.waitFinal(`"e0"`, 5*time.Second); f[0].Payload.Error == nil || f[0].Payload.Error.Code != -32008 {
		t.Fatalf("without the extension: %s, want -32008", f[0].raw)
	}
	w.request("e1", "ListTasks", map[string]any{}, map[string]string{"A2A-Extensions": "urn:other, " + ext})
	if f := w.waitFinal(`"e1"`, 5*time.Second); f[0].Payload.Error != nil {
		t.Fatalf("with the extension in the frame's headers: %s", f[0].raw)
	}
	w2 := dialWS(t, u, http.Header{"A2A-Version": {"1.0"}, "A2A-Extensions": {ext}}, nil)
	w2.request("e2", "ListTasks", map[string]any{}, nil)
	if f := w2.waitFinal(`"e2"`, 5*time.Second); f[0].Payload.Error != nil {
		t.Fatalf("with the extension on the upgrade: %s", f[0].raw)
	}
	// A frame's header replaces the upgrade's.
	w2.request("e3", "ListTasks", map[string]any{}, map[string]string{"A2A-Extensions": "urn:other"})
	if f := w2.waitFinal(`"e3"`, 5*time.Second); f[0].Payload.Error == nil || f[0].Payload.Error.Code != -32008 {
		t.Fatalf("frame header without the extension: %s, want -32008", f[0].raw)
	}
}

// TestWebSocketOverUnixSocket: the WebSocket binding over Caddy's own
// `bind unix//path` (XPORT-1, XPORT-3): the upgrade is authenticated and a
// stream and a unary call run on one connection through the socket.
func TestWebSocketOverUnixSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "gw.sock")
	gw := harness.StartGateway(t, `http://{{ADDR}} {
	bind 127.0.0.1 unix/`+sock+`
	`+wsSite+`
}`)
	unix := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	// The host in the URL is only the Host header: the dialer goes to the socket.
	u := "ws://" + strings.TrimPrefix(gw.URL, "http://") + "/ws"
	w := dialWS(t, u, wsAuth(), unix)
	w.request("s", "SendStreamingMessage", wsMessage("over a unix socket"), nil)
	w.request("l", "ListTasks", map[string]any{}, nil)
	fs := w.waitFinal(`"s"`, 15*time.Second)
	if len(fs) < 3 || !strings.Contains(fs[len(fs)-2].raw, "Echo:") && !strings.Contains(fs[len(fs)-2].raw, "TASK_STATE_INPUT_REQUIRED") {
		t.Fatalf("stream over the socket: %v", fs)
	}
	if l := w.waitFinal(`"l"`, 5*time.Second); l[0].Payload == nil || l[0].Payload.Error != nil {
		t.Fatalf("ListTasks over the socket: %s", l[0].raw)
	}
	// Unauthenticated through the socket: 401 too.
	resp, err := unix.Get(gw.URL + "/ws")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated GET over the socket: %d, want 401", resp.StatusCode)
	}
}
