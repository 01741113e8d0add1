package tests

// End-to-end resumable streams over the built binary (RPC-17): SSE ids on
// both bindings, a reconnect with the Last-Event-ID header (and the
// extension activated) over JSON-RPC and REST. Idempotent sends (RPC-18)
// are in idempotent_test.go.

import (
	"strconv"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// resumeExt activates resumable streams (RPC-17): without it the
// Last-Event-ID header is not read (a plain 1.0 request).
var resumeExt = harness.Header("A2A-Extensions", "urn:caddy-a2a:stream-resume:v1")

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
	t.Parallel()
	g := protoStart(t, protoSlowEcho)
	params := map[string]any{"message": protoMsg("resume me", "", "")}
	s := harness.At(g.URL).Stream(t, "SendStreamingMessage", params, harness.ID("s1"))
	head := s.Take(3, 30*time.Second) // Task, WORKING, the first chunk
	// Cut after event 2.
	s.Close()
	seqs := sseSeqs(t, head)
	if seqs[0] != 0 || head[0].Map["task"] == nil {
		t.Fatalf("first event: SSE id %d %v, want the Task with id 0", seqs[0], head[0].Map)
	}
	wantConsecutive(t, "original stream", seqs[1:], 1)
	taskID := head[0].Map["task"].(map[string]any)["id"].(string)

	// JSON-RPC reconnect with the Last-Event-ID header: 3…, live to the end.
	r := harness.At(g.URL).Stream(t, "SubscribeToTask", map[string]any{"id": taskID}, harness.ID("s1"), harness.Header("Last-Event-ID", "2"), resumeExt)
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
	h := harness.At(g.URL+"/tasks/"+taskID+":subscribe").StreamHTTP(t, "GET", "", harness.Header("Last-Event-ID", "1"), resumeExt)
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
	card := harness.At(g.URL+"/.well-known/agent-card.json").Do(t, "GET", "").JSON(t)
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
