package tests

// End-to-end idempotent sends over the built binary (RPC-18, opt-in): a
// plain A2A 1.0 client may reuse a messageId and gets a new task each
// time, on JSON-RPC, HTTP+JSON and WebSocket; a client that activates
// urn:caddy-a2a:idempotent-send:v1 (A2A-Extensions header, or a WebSocket
// frame's headers) gets the first send's task back, and -32602 / 400 for
// another body under that id; `dedupe always` does it without the header,
// `dedupe_window off` not at all.

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// idemURI is the idempotent-send extension (RPC-18).
const idemURI = "urn:caddy-a2a:idempotent-send:v1"

// idemExt activates idempotent sends on an HTTP request.
var idemExt = harness.Header("A2A-Extensions", idemURI)

// idemSite is an echo agent answering at once (INPUT_REQUIRED) with the
// WebSocket binding and the given extra options.
func idemSite(extra string) string {
	return "a2a {\n\tcard {\n\t\tname idem\n\t}\n\tbackend echo\n\twebsocket /ws\n\t" + extra + "\n}"
}

// idemMsg is a message with the given id and text.
func idemMsg(id, text string) map[string]any {
	return map[string]any{"messageId": id, "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}
}

// rpcSend sends m by JSON-RPC SendMessage; it returns the task id ("" on
// an error) and the reply.
func rpcSend(t *testing.T, url string, m map[string]any, opts ...harness.Option) (string, *harness.Reply) {
	t.Helper()
	r := harness.At(url).Call(t, "SendMessage", map[string]any{"message": m}, opts...)
	if r.Doc == nil {
		t.Fatalf("SendMessage: HTTP %d %s", r.StatusCode, r.Raw)
	}
	task, _ := r.Result["task"].(map[string]any)
	id, _ := task["id"].(string)
	return id, r
}

// restSend sends m by POST /message:send; it returns the task id ("" on an
// error) and the reply.
func restSend(t *testing.T, url string, m map[string]any, opts ...harness.Option) (string, *harness.Reply) {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"message": m})
	r := harness.At(url+"/message:send").Do(t, http.MethodPost, string(b), opts...)
	task, _ := r.Doc["task"].(map[string]any)
	id, _ := task["id"].(string)
	return id, r
}

// wsSendTask sends m as SendMessage in frame fid with the frame headers
// hdr and returns the task id of its answer ("" on an error).
func wsSendTask(t *testing.T, w *wsTestConn, fid string, m map[string]any, hdr map[string]string) (string, int) {
	t.Helper()
	w.request(fid, "SendMessage", map[string]any{"message": m}, hdr)
	f := w.waitFinal(`"`+fid+`"`, 10*time.Second)
	if f[0].Payload == nil {
		t.Fatalf("frame %s: no payload: %s", fid, f[0].raw)
	}
	if e := f[0].Payload.Error; e != nil {
		return "", e.Code
	}
	var res struct {
		Task struct {
			ID string `json:"id"`
		} `json:"task"`
	}
	if err := json.Unmarshal(f[0].Payload.Result, &res); err != nil || res.Task.ID == "" {
		t.Fatalf("frame %s: %v %s, want a task", fid, err, f[0].raw)
	}
	return res.Task.ID, 0
}

// idemCardExt returns the card's idempotent-send extension (nil when the
// card does not declare it).
func idemCardExt(t *testing.T, url string) map[string]any {
	t.Helper()
	card := harness.At(url+"/.well-known/agent-card.json").Do(t, "GET", "").JSON(t)
	caps, _ := card["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].([]any)
	for _, e := range exts {
		if m, _ := e.(map[string]any); m["uri"] == idemURI {
			return m
		}
	}
	return nil
}

// TestIdempotentSendOptIn (RPC-18): the card declares the extension; a
// plain 1.0 client reusing a messageId — with a byte-identical body or
// another — gets a new task each time on JSON-RPC, HTTP+JSON and
// WebSocket, and no A2A-Extensions echo; a client that activates the
// extension gets the first task back (echoed) and invalid params for
// another body.
func TestIdempotentSendOptIn(t *testing.T) {
	t.Parallel()
	gw := harness.StartGateway(t, idemSite(""))
	ext := idemCardExt(t, gw.URL)
	p, _ := ext["params"].(map[string]any)
	if ext == nil || p["windowSeconds"] != float64(600) || p["always"] != false {
		t.Fatalf("card extension %v, want %s with windowSeconds 600, always false", ext, idemURI)
	}

	t.Run("JSON-RPC", func(t *testing.T) {
		id := protoID()
		seen := map[string]bool{}
		for i, text := range []string{"same", "same", "other"} {
			task, r := rpcSend(t, gw.URL, idemMsg(id, text))
			if task == "" || seen[task] || r.Header.Get("A2A-Extensions") != "" {
				t.Fatalf("plain send %d (%q): task %q (seen before: %v), echo %q, %s; want a new task, no echo", i, text, task, seen[task], r.Header.Get("A2A-Extensions"), r.Raw)
			}
			seen[task] = true
		}
		id = protoID()
		first, r := rpcSend(t, gw.URL, idemMsg(id, "once"), idemExt)
		if first == "" || !strings.Contains(r.Header.Get("A2A-Extensions"), idemURI) {
			t.Fatalf("activated send: task %q echo %q %s", first, r.Header.Get("A2A-Extensions"), r.Raw)
		}
		if again, r := rpcSend(t, gw.URL, idemMsg(id, "once"), idemExt); again != first {
			t.Fatalf("activated resend: task %q %s, want %s", again, r.Raw, first)
		}
		if _, r := rpcSend(t, gw.URL, idemMsg(id, "changed"), idemExt); r.Error == nil || r.Error["code"] != float64(-32602) {
			t.Fatalf("activated resend with another body: %s, want -32602", r.Raw)
		}
		// The same id without the extension: a plain send, a new task.
		if plain, r := rpcSend(t, gw.URL, idemMsg(id, "once")); plain == "" || plain == first {
			t.Fatalf("plain send after an activated one: %q %s, want a new task", plain, r.Raw)
		}
	})

	t.Run("HTTP+JSON", func(t *testing.T) {
		id := protoID()
		seen := map[string]bool{}
		for i, text := range []string{"same", "same", "other"} {
			task, r := restSend(t, gw.URL, idemMsg(id, text))
			if r.StatusCode != http.StatusOK || task == "" || seen[task] || r.Header.Get("A2A-Extensions") != "" {
				t.Fatalf("plain send %d (%q): HTTP %d task %q echo %q %s; want a new task, no echo", i, text, r.StatusCode, task, r.Header.Get("A2A-Extensions"), r.Raw)
			}
			seen[task] = true
		}
		id = protoID()
		first, r := restSend(t, gw.URL, idemMsg(id, "once"), idemExt)
		if first == "" || !strings.Contains(r.Header.Get("A2A-Extensions"), idemURI) {
			t.Fatalf("activated send: HTTP %d task %q echo %q %s", r.StatusCode, first, r.Header.Get("A2A-Extensions"), r.Raw)
		}
		if again, r := restSend(t, gw.URL, idemMsg(id, "once"), idemExt); again != first {
			t.Fatalf("activated resend: task %q %s, want %s", again, r.Raw, first)
		}
		if _, r := restSend(t, gw.URL, idemMsg(id, "changed"), idemExt); r.StatusCode != http.StatusBadRequest {
			t.Fatalf("activated resend with another body: HTTP %d %s, want 400", r.StatusCode, r.Raw)
		}
	})

	t.Run("WebSocket frame headers", func(t *testing.T) {
		w := dialWS(t, wsURL(gw.URL, "/ws"), http.Header{"A2A-Version": {"1.0"}}, nil)
		id := protoID()
		a, _ := wsSendTask(t, w, "p1", idemMsg(id, "same"), nil)
		b, _ := wsSendTask(t, w, "p2", idemMsg(id, "same"), nil)
		if a == "" || a == b {
			t.Fatalf("plain frames under one messageId: tasks %q and %q, want two", a, b)
		}
		hdr := map[string]string{"A2A-Extensions": idemURI}
		id = protoID()
		c, _ := wsSendTask(t, w, "a1", idemMsg(id, "once"), hdr)
		d, _ := wsSendTask(t, w, "a2", idemMsg(id, "once"), hdr)
		if c == "" || c != d {
			t.Fatalf("activated frames under one messageId: tasks %q and %q, want one", c, d)
		}
		if _, code := wsSendTask(t, w, "a3", idemMsg(id, "changed"), hdr); code != -32602 {
			t.Fatalf("activated frame with another body: code %d, want -32602", code)
		}
	})
}

// TestIdempotentSendStreaming (RPC-18, activated): a streaming resend of a
// blocking send gets its task snapshot; a streaming resend of a streamed
// send streams the first turn's events from its start; no second turn.
func TestIdempotentSendStreaming(t *testing.T) {
	t.Parallel()
	g := protoStart(t, protoFastEcho)
	m := protoMsg("only once", "", "")
	first, _ := rpcSend(t, g.URL, m, idemExt)
	if first == "" {
		t.Fatal("first send: no task")
	}
	s := harness.At(g.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s1"), idemExt)
	evs := s.RestEvents(30 * time.Second)
	if len(evs) != 1 {
		t.Fatalf("streaming resend of a blocking send: %d events, want the task snapshot", len(evs))
	}
	if tk, _ := evs[0].Map["task"].(map[string]any); tk == nil || tk["id"] != first {
		t.Fatalf("streaming resend of a blocking send: %v, want task %s", evs[0].Map, first)
	}
	m2 := protoMsg("streamed once", "", "")
	orig := harness.At(g.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": m2}, harness.ID("s2"), idemExt).RestEvents(30 * time.Second)
	origTask, _ := orig[0].Map["task"].(map[string]any)
	if origTask == nil {
		t.Fatalf("no task first in the stream: %v", orig[0].Map)
	}
	evs = harness.At(g.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": m2}, harness.ID("s3"), idemExt).RestEvents(30 * time.Second)
	if len(evs) == 0 || eventStateOf(evs[len(evs)-1]) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("streaming resend: %d events, want the first turn's ending INPUT_REQUIRED", len(evs))
	}
	wantConsecutive(t, "streaming resend", sseSeqs(t, evs), 1)
	for _, ev := range evs {
		su, _ := ev.Map["statusUpdate"].(map[string]any)
		if su == nil || su["taskId"] != origTask["id"] {
			t.Fatalf("streaming resend event %v, want status updates of task %v", ev.Map, origTask["id"])
		}
	}
	var list struct {
		TotalSize int `json:"totalSize"`
	}
	g.result("ListTasks", map[string]any{}, &list)
	if list.TotalSize != 2 {
		t.Errorf("%d tasks after the resends, want 2 (two turns)", list.TotalSize)
	}
	// A plain streaming send under m2's id is a new task (RPC-18 opt-in).
	plain := harness.At(g.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": m2}, harness.ID("s4")).RestEvents(30 * time.Second)
	if tk, _ := plain[0].Map["task"].(map[string]any); tk == nil || tk["id"] == origTask["id"] {
		t.Fatalf("plain streaming resend: %v, want a new task", plain[0].Map)
	}
}

// TestDedupeAlwaysAndOff (RPC-18): `dedupe always` deduplicates a client
// that activates nothing (the card says params.always); `dedupe_window
// off` deduplicates nobody and the card does not declare the extension.
func TestDedupeAlwaysAndOff(t *testing.T) {
	t.Parallel()
	always := harness.StartGateway(t, idemSite("dedupe always"))
	if p, _ := idemCardExt(t, always.URL)["params"].(map[string]any); p["always"] != true {
		t.Errorf("dedupe always: card params %v, want always true", p)
	}
	id := protoID()
	first, _ := rpcSend(t, always.URL, idemMsg(id, "x"))
	if again, r := rpcSend(t, always.URL, idemMsg(id, "x")); first == "" || again != first {
		t.Fatalf("dedupe always, plain resend: %q %s, want %q", again, r.Raw, first)
	}
	if _, r := restSend(t, always.URL, idemMsg(id, "y")); r.StatusCode != http.StatusBadRequest {
		t.Fatalf("dedupe always, other body over REST: HTTP %d %s, want 400", r.StatusCode, r.Raw)
	}

	off := harness.StartGateway(t, idemSite("dedupe_window off"))
	if ext := idemCardExt(t, off.URL); ext != nil {
		t.Errorf("dedupe_window off: card declares %v", ext)
	}
	id = protoID()
	a, _ := rpcSend(t, off.URL, idemMsg(id, "x"), idemExt)
	b, r := rpcSend(t, off.URL, idemMsg(id, "x"), idemExt)
	if a == "" || a == b || r.Header.Get("A2A-Extensions") != "" {
		t.Fatalf("dedupe_window off, activated resend: %q then %q (echo %q), want two tasks and no echo", a, b, r.Header.Get("A2A-Extensions"))
	}
}
