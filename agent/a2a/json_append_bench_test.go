package a2a

import (
	"encoding/json"
	"testing"
)

// echoTask is a typical echo turn's task: the user's message in the
// history, one agent artifact of text parts and a final status with the
// agent's answer.
func echoTask() *Task {
	answer := &Message{MessageID: "0193f0c2-7a1e-7c4b-9f00-5b3c2d1e0f01", ContextID: "ctx-0193f0c2-7a1e", TaskID: "task-0193f0c2-7a1e", Role: RoleAgent,
		Parts: []Part{TextPart("echo: hello, agent — how are you today?")}}
	return &Task{
		ID: "task-0193f0c2-7a1e", ContextID: "ctx-0193f0c2-7a1e",
		Status: TaskStatus{State: TaskStateCompleted, Message: answer, Timestamp: "2026-12-01T18:00:00.123Z"},
		Artifacts: []Artifact{{ArtifactID: "artifact-1", Name: "answer", Parts: []Part{
			TextPart("echo: hello, agent"), TextPart(" — how are you today?")}}},
		History: []Message{
			{MessageID: "msg-user-1", ContextID: "ctx-0193f0c2-7a1e", TaskID: "task-0193f0c2-7a1e", Role: RoleUser,
				Parts: []Part{TextPart("hello, agent — how are you today?")}, Metadata: map[string]any{"example.com/a2a": map[string]any{"cwd": "/tmp"}}},
			*answer,
		},
	}
}

func BenchmarkEchoTaskJSON(b *testing.B) {
	task := echoTask()
	ev := StreamResponse{StatusUpdate: &TaskStatusUpdateEvent{TaskID: task.ID, ContextID: task.ContextID, Status: task.Status,
		Metadata: map[string]any{"example.com/a2a": map[string]any{"usage": map[string]any{"inputTokens": int64(6), "outputTokens": int64(7), "totalTokens": int64(13)}}}}}
	resp := &SendMessageResponse{Task: task}
	for _, c := range []struct {
		name string
		v    JSONAppender
	}{{"task", task}, {"statusEvent", &ev}, {"sendResponse", resp}} {
		b.Run(c.name+"/encoding_json", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/MarshalJSONValue", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := MarshalJSONValue(c.v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/AppendJSON_reused", func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = c.v.AppendJSON(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
