package tests

// End-to-end resumable streams and idempotent sends over the built binary
// (RPC-17, RPC-18): SSE ids on both bindings, a reconnect with the
// Last-Event-ID header over JSON-RPC and REST, and a resent messageId.

import (
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// sseSeqs returns the SSE ids of evs as numbers, failing on a missing or
// malformed one.
func sseSeqs(t *testing.T, evs []harness.Event) []uint64 {
	t.Helper()
	var out []uint64
	for i, ev := range evs {
		n, err := strconv.ParseUint(ev.SSEID, 10, 64)
		if err != nil {
			t.Fatalf("event %d has SSE id %q, want a sequence number: %v", i, ev.SSEID, ev.Map)
		}
		out = append(out, n)
	}
	return out
}

// wantConsecutive fails unless seqs are from, from+1, …
func wantConsecutive(t *testing.T, what string, seqs []uint64, from uint64) {
	t.Helper()
	for i, s := range seqs {
		if s != from+uint64(i) {
			t.Fatalf("%s: SSE ids %v, want consecutive from %d", what, seqs, from)
		}
	}
}

func eventStateOf(ev harness.Event) string {
	if su, ok := ev.Map["statusUpdate"].(map[string]any); ok {
		st, _ := su["status"].(map[string]any)
		s, _ := st["state"].(string)
		return s
	}
	return ""
}

func TestStreamResumeLastEventID(t *testing.T) {
	g := protoStart(t, protoSlowEcho)
	params := map[string]any{"message": protoMsg("resume me", "", "")}
	s := harness.StreamRPC(t, g.URL, "", "SendStreamingMessage", params, harness.ID("s1"))
	var head []harness.Event
	for len(head) < 3 { // Task, WORKING, the first chunk
		ev, ok := s.NextEvent(30 * time.Second)
		if !ok {
			t.Fatalf("stream ended after %d events", len(head))
		}
		head = append(head, ev)
	}
	s.Close() // cut after event 2
	seqs := sseSeqs(t, head)
	if seqs[0] != 0 || head[0].Map["task"] == nil {
		t.Fatalf("first event: SSE id %d %v, want the Task with id 0", seqs[0], head[0].Map)
	}
	wantConsecutive(t, "original stream", seqs[1:], 1)
	taskID := head[0].Map["task"].(map[string]any)["id"].(string)

	// JSON-RPC reconnect with the Last-Event-ID header: 3…, live to the end.
	r := harness.StreamRPC(t, g.URL, "", "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("s1"), harness.Header("Last-Event-ID", "2"))
	rest := r.RestEvents(30 * time.Second)
	if len(rest) == 0 {
		t.Fatal("resumed stream carried no event")
	}
	rseqs := sseSeqs(t, rest)
	wantConsecutive(t, "resumed JSON-RPC stream", rseqs, 3)
	last := rest[len(rest)-1]
	if eventStateOf(last) != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("resumed stream ended with %v, want the final INPUT_REQUIRED", last.Map)
	}
	end := rseqs[len(rseqs)-1]

	// REST reconnect on the task at rest: the stored events after 1, then
	// the stream waits for a follow-up turn (RPC-11).
	h := harness.StreamHTTP(t, "GET", g.URL+"/tasks/"+taskID+":subscribe", "", harness.Header("Last-Event-ID", "1"))
	var replay []harness.Event
	for uint64(len(replay)) < end-1 {
		ev, ok := h.NextEvent(30 * time.Second)
		if !ok {
			t.Fatalf("REST replay ended after %d events, want %d", len(replay), end-1)
		}
		replay = append(replay, ev)
	}
	h.Close()
	wantConsecutive(t, "resumed REST stream", sseSeqs(t, replay), 2)

	// The card advertises the extension with its log size.
	card := harness.Do(t, "GET", g.URL+"/.well-known/agent-card.json", "").JSON(t)
	caps, _ := card["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].([]any)
	found := false
	for _, e := range exts {
		if m, _ := e.(map[string]any); m["uri"] == "urn:caddy-a2a:stream-resume:v1" {
			p, _ := m["params"].(map[string]any)
			found = p["eventLogSize"] == float64(1000)
		}
	}
	if !found {
		t.Errorf("card extensions %v lack urn:caddy-a2a:stream-resume:v1 with eventLogSize 1000", exts)
	}
}

func TestIdempotentSendOverHTTP(t *testing.T) {
	g := protoStart(t, protoFastEcho)
	m := protoMsg("only once", "", "")
	first := g.send(map[string]any{"message": m})
	again := g.send(map[string]any{"message": m})
	if first.ID != again.ID || again.Status.State != "TASK_STATE_INPUT_REQUIRED" {
		t.Fatalf("resend: task %s (%s), want the first send's task %s", again.ID, again.Status.State, first.ID)
	}
	var list struct {
		TotalSize int `json:"totalSize"`
	}
	g.result("ListTasks", map[string]any{}, &list)
	if list.TotalSize != 1 {
		t.Errorf("%d tasks after a resend, want 1 (one turn)", list.TotalSize)
	}
	other := map[string]any{"messageId": m["messageId"], "role": "ROLE_USER", "parts": []any{map[string]any{"text": "something else"}}}
	rep := g.rpc("SendMessage", map[string]any{"message": other})
	if rep.Error == nil || rep.Error.Code != -32602 {
		t.Fatalf("same messageId, other body: %+v %s, want -32602", rep.Error, rep.Result)
	}
	// A streaming resend of that blocking send: its turn was watched by
	// nobody, so only its snapshot can be sent (no new task).
	s := harness.StreamRPC(t, g.URL, "", "SendStreamingMessage", map[string]any{"message": m}, harness.ID("s1"))
	evs := s.RestEvents(30 * time.Second)
	if len(evs) != 1 {
		t.Fatalf("streaming resend of a blocking send: %d events, want the task snapshot", len(evs))
	}
	if tk, _ := evs[0].Map["task"].(map[string]any); tk == nil || tk["id"] != first.ID {
		t.Fatalf("streaming resend of a blocking send: %v, want task %s", evs[0].Map, first.ID)
	}
	// A streaming resend of a streamed send streams the first turn's
	// events from its start.
	m2 := protoMsg("streamed once", "", "")
	orig := harness.StreamRPC(t, g.URL, "", "SendStreamingMessage", map[string]any{"message": m2}, harness.ID("s2")).RestEvents(30 * time.Second)
	origTask, _ := orig[0].Map["task"].(map[string]any)
	if origTask == nil {
		t.Fatalf("no task first in the stream: %v", orig[0].Map)
	}
	s = harness.StreamRPC(t, g.URL, "", "SendStreamingMessage", map[string]any{"message": m2}, harness.ID("s3"))
	evs = s.RestEvents(30 * time.Second)
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
	g.result("ListTasks", map[string]any{}, &list)
	if list.TotalSize != 2 {
		t.Errorf("%d tasks after the streaming resends, want 2", list.TotalSize)
	}
}
