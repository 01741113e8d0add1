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

// TestResultFrameMatchesEncodingJSON checks that a unary result frame
// (a2a's encoder, straight into the envelope) gives the bytes encoding/json
// gives for the whole rpc.Response with the result it encodes, for every
// kind of id; a result that cannot be encoded is the internal error.
func TestResultFrameMatchesEncodingJSON(t *testing.T) {
	task := &a2a.Task{ID: "t<1>", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: &a2a.Message{Role: a2a.RoleAgent, MessageID: "m",
		Parts: []a2a.Part{a2a.TextPart("a <b> & \u2029 \xff"), {Data: json.RawMessage(` {"x" : [1, "<"]} `)}}}},
		Metadata: map[string]any{"z": 1.0, "a": []any{"&"}}}
	results := []any{task, &a2a.SendMessageResponse{Task: task}, &a2a.SendMessageResponse{Message: task.Status.Message}, *task, struct{}{},
		&a2a.ListTasksResponse{Tasks: []a2a.Task{*task}}, v03.Result03(a2a.MethodGetTask, task)}
	ids := []string{`1`, `"abc"`, `null`, `"a<b"`, `"x y"`, `{"k": 1}`, `1 `}
	for _, id := range ids {
		for _, res := range results {
			rb, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(rpcResponse(id, rb))
			if got := resultFrame(json.RawMessage(id), res); !bytes.Equal(got, want) {
				t.Errorf("id %s, %T:\n got %s\nwant %s", id, res, got, want)
			}
		}
	}
	bad := &a2a.Task{ID: "t", Status: a2a.TaskStatus{Message: &a2a.Message{Parts: []a2a.Part{{Data: json.RawMessage(`{`)}}}}}
	if got := string(resultFrame(json.RawMessage(`1`), bad)); !bytes.Contains([]byte(got), []byte(`"error":`)) || bytes.Contains([]byte(got), []byte(`"result"`)) {
		t.Errorf("unencodable result: %s", got)
	}
}

// rpcResponse is the response encoding/json encodes for a result.
func rpcResponse(id string, result []byte) any {
	return struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
	}{"2.0", json.RawMessage(id), result}
}
