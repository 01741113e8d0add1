package cli

import (
	"bytes"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRendererDedup: streamed deltas, then the whole answer repeated in a
// final status and in an artifact, print the answer once.
func TestRendererDedup(t *testing.T) {
	var out, errb bytes.Buffer
	r := NewRenderer(&out, &errb, ModePlain, "", false)
	msg := func(s string) *a2a.Message {
		return &a2a.Message{Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(s)}}
	}
	evs := []a2a.StreamResponse{
		{Task: &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg("Hel")}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg("lo")}}},
		{ArtifactUpdate: &a2a.TaskArtifactUpdateEvent{TaskID: "t", ContextID: "c", Artifact: a2a.Artifact{ArtifactID: "a", Parts: []a2a.Part{a2a.TextPart("Hello")}}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted, Message: msg("Hello")}}},
	}
	for _, ev := range evs {
		if err := r.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	r.Finish()
	if out.String() != "Hello\n" || errb.String() != "state=completed task=t context=c\n" {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
}

// TestRendererFinalRepeatsLastDelta: an exec agent's end text arrives as a
// working delta and again as the final status message; it prints once.
func TestRendererFinalRepeatsLastDelta(t *testing.T) {
	var out, errb bytes.Buffer
	r := NewRenderer(&out, &errb, ModePlain, "", false)
	msg := func(s string) *a2a.Message {
		return &a2a.Message{Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(s)}}
	}
	for _, ev := range []a2a.StreamResponse{
		{Task: &a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateSubmitted}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg("Working on it…")}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg("Done.")}}},
		{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateInputRequired, Message: msg("Done.")}}},
	} {
		if err := r.Event(ev); err != nil {
			t.Fatal(err)
		}
	}
	r.Finish()
	if out.String() != "Working on it…Done.\n" {
		t.Fatalf("stdout %q, want the text once", out.String())
	}
}
