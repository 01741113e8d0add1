package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
)

// TestEventFrameMatchesEncodedResponse checks that EventFrame's direct
// envelope gives the bytes of encoding the whole rpc.Response, for every
// kind of id and for events whose text the encoder escapes.
func TestEventFrameMatchesEncodedResponse(t *testing.T) {
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1",
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{Role: a2a.RoleAgent, MessageID: "m",
			Parts: []a2a.Part{a2a.TextPart("a <b> & \"c\"\nline\u2028end é")}}}}}
	legacy := ev
	legacy.Legacy = v03.Event03(ev)
	ids := []string{`1`, `-12`, `1.5e3`, `"abc"`, `"a-b_c.d"`, `null`, `"a<b"`, `"x y"`, `"é"`, `"a\"b"`, `{"k": 1}`, `[1,2]`, `nul`, `"`, `1 `}
	for _, id := range ids {
		for _, e := range []any{ev, &ev, legacy, a2a.StreamResponse{Task: &a2a.Task{ID: "t", ContextID: "c"}}} {
			want := encode(rpcResult(json.RawMessage(id), legacyEvent(e)))
			got := EventFrame(json.RawMessage(id), e)
			if !bytes.Equal(got, want) {
				t.Errorf("id %s: EventFrame\n%s\nwant\n%s", id, got, want)
			}
		}
	}
	if got, want := EventFrame(nil, ev), encode(rpcResult(nullID, ev)); !bytes.Equal(got, want) {
		t.Errorf("nil id: %s, want %s", got, want)
	}
	if !bytes.HasPrefix(EventFrame(json.RawMessage(`7`), ev), []byte(`{"jsonrpc":"2.0","id":7,"result":{"statusUpdate":`)) {
		t.Errorf("frame: %s", EventFrame(json.RawMessage(`7`), ev))
	}
}

// BenchmarkEventFrame measures encoding one status update of a stream as
// its JSON-RPC frame (per event, per subscriber), next to its same-run
// baseline: encoding the whole rpc.Response (the result encoded, then
// compacted into the envelope).
func BenchmarkEventFrame(b *testing.B) {
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "0f8fad5b-d9cb-469f-a165-70867728950e", ContextID: "7c9e6679-7425-40de-944b-e07fc1f90ae7",
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &a2a.Message{Role: a2a.RoleAgent, MessageID: "1b9d6bcd-bbfd-4b2d-9b5d-ab8dfbbd4bed",
			Parts: []a2a.Part{a2a.TextPart("Echo: Create a VPC")}}}}}
	id := json.RawMessage(`1`)
	b.Run("frame", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = EventFrame(id, ev)
		}
	})
	b.Run("baseline-whole-response", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			_ = encode(rpcResult(id, legacyEvent(ev)))
		}
	})
}
