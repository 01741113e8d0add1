package grpc

import (
	"encoding/json"
	"math"
	"testing"

	pb "github.com/a2aproject/a2a-go/v2/a2apb/v1"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// checkDirect converts v into a fresh message of out's type both ways and
// fails unless the direct path, when it answers, matches ProtoJSON's.
// It reports whether the direct path answered.
func checkDirect(t testing.TB, name string, v any, newOut func() proto.Message) bool {
	t.Helper()
	direct, slow := newOut(), newOut()
	ok := directPB(v, direct)
	err := viaProtoJSON(v, slow)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("%s: the direct path answered where ProtoJSON fails (%v): %v", name, err, direct)
	}
	if !proto.Equal(direct, slow) {
		t.Fatalf("%s: direct %v\nProtoJSON %v", name, direct, slow)
	}
	return true
}

func richTask() *a2a.Task {
	text := "héllo ✓"
	empty := ""
	t := benchTask()
	t.Metadata = map[string]any{"n": 1.5, "i": 3, "s": "x", "b": true, "nil": nil, "list": []any{1.0, "a", map[string]any{"k": false}},
		"obj": map[string]any{"deep": map[string]any{"x": []any{}}}, "bytes": []byte{1, 2}}
	t.Artifacts = []a2a.Artifact{{ArtifactID: "a1", Name: "n", Description: "d", Extensions: []string{"urn:x"},
		Parts: []a2a.Part{
			{Text: &text, Metadata: map[string]any{"k": "v"}},
			{Text: &empty},
			{Raw: []byte{0, 1, 2, 255}, MediaType: "application/octet-stream", Filename: "f.bin"},
			{URL: "https://example.com/f", MediaType: "text/plain"},
			{Data: json.RawMessage(`{"a":[1,2,{"b":null}],"c":"d"}`)},
			{Data: json.RawMessage(`[1,"x"]`)},
			{},
		}}}
	t.History[0].Extensions = []string{"urn:a", "urn:b"}
	t.History[0].ReferenceTaskIDs = []string{"t0"}
	t.History[0].Metadata = map[string]any{"skill": "deploy"}
	t.Status.Timestamp = "2026-01-02T03:04:05.123456789Z"
	return t
}

// issue 29: the direct conversion of the hot results answers exactly what
// the ProtoJSON round trip answers (RPC-14), and falls back where it cannot.
func TestDirectMatchesProtoJSON(t *testing.T) {
	task := richTask()
	msg := task.History[0]
	newSend := func() proto.Message { return new(pb.SendMessageResponse) }
	newEv := func() proto.Message { return new(pb.StreamResponse) }
	newTask := func() proto.Message { return new(pb.Task) }
	direct := map[string]struct {
		v   any
		out func() proto.Message
	}{
		"send: task":          {&a2a.SendMessageResponse{Task: task}, newSend},
		"send: message":       {&a2a.SendMessageResponse{Message: &msg}, newSend},
		"send: bench task":    {&a2a.SendMessageResponse{Task: benchTask()}, newSend},
		"task":                {task, newTask},
		"event: task":         {a2a.StreamResponse{Task: task}, newEv},
		"event: message":      {a2a.StreamResponse{Message: &msg}, newEv},
		"event: status":       {a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: task.Status, Metadata: map[string]any{"x": 1}}}, newEv},
		"event: artifact":     {a2a.StreamResponse{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: task.Artifacts[0], Append: true, LastChunk: true}}, newEv},
		"task: offset time":   {&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: "2026-01-02T03:04:05+02:00"}}, newTask},
		"task: no status":     {&a2a.Task{ID: "t", ContextID: "c"}, newTask},
		"metadata: json.Num":  {&a2a.Task{ID: "t", ContextID: "c", Metadata: map[string]any{"n": json.Number("12"), "l": []string{"a"}}}, newTask},
		"metadata: bad utf-8": {&a2a.Task{ID: "t", ContextID: "c", Metadata: map[string]any{"k": "v\xff"}}, newTask}, // through its JSON form
		"message: empty role": {&a2a.SendMessageResponse{Message: &a2a.Message{MessageID: "m"}}, newSend},
	}
	for name, c := range direct {
		if !checkDirect(t, name, c.v, c.out) {
			t.Errorf("%s: the direct path gave up on a value it should convert", name)
		}
	}
	two := "x"
	fallback := map[string]struct {
		v   any
		out func() proto.Message
	}{
		"bad utf-8":        {&a2a.Task{ID: "t\xff", ContextID: "c"}, newTask},
		"unknown state":    {&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: "TASK_STATE_NAPPING"}}, newTask},
		"unknown role":     {&a2a.SendMessageResponse{Message: &a2a.Message{MessageID: "m", Role: "ROLE_ROBOT"}}, newSend},
		"bad timestamp":    {&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{Timestamp: "yesterday"}}, newTask},
		"two contents":     {&a2a.SendMessageResponse{Message: &a2a.Message{MessageID: "m", Parts: []a2a.Part{{Text: &two, URL: "https://x"}}}}, newSend},
		"NaN metadata":     {&a2a.Task{ID: "t", ContextID: "c", Metadata: map[string]any{"n": math.NaN()}}, newTask},
		"empty send":       {&a2a.SendMessageResponse{}, newSend},
		"task and message": {&a2a.SendMessageResponse{Task: task, Message: &msg}, newSend},
		"empty event":      {a2a.StreamResponse{}, newEv},
		"wrong type":       {&msg, newTask},
	}
	for name, c := range fallback {
		if checkDirect(t, name, c.v, c.out) {
			t.Errorf("%s: the direct path answered; it must leave this value to ProtoJSON", name)
		}
	}
}

// FuzzDirectMatchesProtoJSON: whatever strings a task holds, the direct
// path either gives up or answers what ProtoJSON answers.
func FuzzDirectMatchesProtoJSON(f *testing.F) {
	f.Add("hello", "2026-01-02T03:04:05.000Z", "TASK_STATE_WORKING", "k", "v", []byte("x"), `{"a":1}`)
	f.Add("\xff", "2026-13-02T03:04:05Z", "", "", "\x00", []byte{}, `[`)
	f.Fuzz(func(t *testing.T, text, ts, state, mk, mv string, raw []byte, data string) {
		task := &a2a.Task{ID: text, ContextID: mv, Status: a2a.TaskStatus{State: a2a.TaskState(state), Timestamp: ts},
			Metadata: map[string]any{mk: mv, "n": float64(len(raw))},
			History:  []a2a.Message{{MessageID: mk, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}, {Raw: raw}, {Data: json.RawMessage(data)}}}}}
		checkDirect(t, "fuzz", task, func() proto.Message { return new(pb.Task) })
		checkDirect(t, "fuzz", a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: text, Status: task.Status, Metadata: task.Metadata}},
			func() proto.Message { return new(pb.StreamResponse) })
	})
}
