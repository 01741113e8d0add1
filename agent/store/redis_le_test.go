package store

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisLastEventByReference (issue 32, memory): the event that ends
// an unwatched turn is kept as a reference to the task JSON when it
// repeats it; it reads back as the event itself, after a later write that
// changes the task, and after a watched turn moves it into a stream.
func TestRedisLastEventByReference(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	task := mkTask("t1", "c1", a2a.TaskStateInputRequired, now)
	task.Status.Message = &a2a.Message{Role: a2a.RoleAgent, MessageID: "m1", Parts: []a2a.Part{a2a.TextPart("which one?")}}
	end := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t1", ContextID: "c1", Status: task.Status}}
	want := mustJSON(t, end)
	if err := s.AppendEvents("t1", []Event{{Seq: 1, Response: end}}, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutTaskWithJobs(ctx, "alice", task, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	le, err := s.c.HGet(ctx, s.taskKey("t1"), "le").Result()
	if err != nil || !strings.HasPrefix(le, "1 =") {
		t.Fatalf("le field %q, %v: want a reference", le, err)
	}
	checkEvents(t, s, "t1", 0, "1 "+want)

	// The next turn starts: the record changes, the event stays.
	task.Status = a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.Timestamp(now.Add(time.Second))}
	mustPut(t, s, "alice", task)
	if le, _ := s.c.HGet(ctx, s.taskKey("t1"), "le").Result(); le != "1 "+want {
		t.Fatalf("le field after a write %q: want the event spelled out", le)
	}
	checkEvents(t, s, "t1", 0, "1 "+want)

	// A second task: the reference moves into a stream with a watched turn.
	task2 := mkTask("t2", "c1", a2a.TaskStateCompleted, now)
	end2 := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t2", ContextID: "c1", Status: task2.Status}}
	if err := s.AppendEvents("t2", []Event{{Seq: 1, Response: end2}}, 0); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "alice", task2)
	if le, _ := s.c.HGet(ctx, s.taskKey("t2"), "le").Result(); !strings.HasPrefix(le, "1 =") {
		t.Fatalf("le field %q: want a reference", le)
	}
	more := seqEvents(2, 3)
	if err := s.AppendEvents("t2", more, 0); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, s, "t2", 0, "1 "+mustJSON(t, end2), "2 "+mustJSON(t, more[0].Response), "3 "+mustJSON(t, more[1].Response))
	if n, _ := s.c.HExists(ctx, s.taskKey("t2"), "le").Result(); n {
		t.Error("the le field stayed after the stream was created")
	}

	// An event that does not repeat the task is kept as it is.
	other := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: "t3", ContextID: "c1", Status: task2.Status, Metadata: map[string]any{"k": "v"}}}
	if err := s.AppendEvents("t3", []Event{{Seq: 4, Response: other}}, 0); err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, "alice", mkTask("t3", "c1", a2a.TaskStateCompleted, now))
	if le, _ := s.c.HGet(ctx, s.taskKey("t3"), "le").Result(); le != "4 "+mustJSON(t, other) {
		t.Fatalf("le field %q: want the event itself", le)
	}
}

// TestLeRefRoundTrip: leExpand undoes leRef; a non-matching event or a
// malformed reference is not taken for one.
func TestLeRefRoundTrip(t *testing.T) {
	body := `{"id":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"},"history":[]}`
	ev := `{"statusUpdate":{"taskId":"t","contextId":"c","status":{"state":"TASK_STATE_COMPLETED"}}}`
	ref := leRef(ev, body)
	if !strings.HasPrefix(ref, "=") {
		t.Fatalf("leRef = %q", ref)
	}
	if got, ok := leExpand(ref, body); !ok || got != ev {
		t.Fatalf("leExpand = %q, %v", got, ok)
	}
	for _, e := range []string{`{"statusUpdate":{"taskId":"u","contextId":"c"}}`, `{"artifactUpdate":{}}`} {
		if got := leRef(e, body); got != e {
			t.Errorf("leRef(%s) = %q", e, got)
		}
	}
	if _, ok := leExpand("=999", body); ok {
		t.Error("a reference past the body expanded")
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkEvents compares the task's logged events from after+1 on with
// want ("<seq> <JSON>" each).
func checkEvents(t *testing.T, s *Redis, id string, after uint64, want ...string) {
	t.Helper()
	evs, err := s.Events(context.Background(), id, after)
	if err != nil {
		t.Fatal(err)
	}
	got := make([]string, len(evs))
	for i, ev := range evs {
		got[i] = itoa(int64(ev.Seq)) + " " + mustJSON(t, ev.Response)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("events of %s:\n got %v\nwant %v", id, got, want)
	}
}

// TestRedisHistoryTail (issue 32, memory): a task whose history ends with
// its status message stores that message once and reads back whole, by
// GetTask and ListTasks; a record written before (the message twice)
// reads as it is.
func TestRedisHistoryTail(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000).UTC()
	task := mkTask("t1", "c1", a2a.TaskStateInputRequired, now)
	user := a2a.Message{Role: a2a.RoleUser, MessageID: "u1", Parts: []a2a.Part{a2a.TextPart("make a VPC")}}
	answer := a2a.Message{Role: a2a.RoleAgent, MessageID: "m1", Parts: []a2a.Part{a2a.TextPart("which region?")}}
	task.History = []a2a.Message{user, answer}
	task.Status.Message = &answer
	want := mustJSON(t, task)
	mustPut(t, s, "alice", task)
	b, _ := s.c.HGet(ctx, s.taskKey("t1"), "b").Result()
	if !strings.HasSuffix(b, historyTail) || strings.Count(b, "which region?") != 1 {
		t.Fatalf("stored %q: want the answer once and the tail mark", b)
	}
	got, err := s.GetTask(ctx, "alice", "t1")
	if err != nil || mustJSON(t, got) != want {
		t.Fatalf("GetTask:\n got %s\nwant %s (%v)", mustJSON(t, got), want, err)
	}
	res := mustList(t, s, ListQuery{Owner: "alice", Limit: 5})
	if len(res.Tasks) != 1 || mustJSON(t, res.Tasks[0]) != want {
		t.Fatalf("ListTasks: %+v", res.Tasks)
	}
	// As written before: the whole history in the JSON, no mark.
	s.c.HSet(ctx, s.taskKey("t1"), "b", want)
	if got, err := s.GetTask(ctx, "alice", "t1"); err != nil || mustJSON(t, got) != want {
		t.Fatalf("old record: %s, %v", mustJSON(t, got), err)
	}
	// A history that does not end with the status message is kept whole.
	task.History = []a2a.Message{answer, user}
	mustPut(t, s, "alice", task)
	if b, _ := s.c.HGet(ctx, s.taskKey("t1"), "b").Result(); strings.HasSuffix(b, historyTail) {
		t.Fatalf("stored %q with the tail mark", b)
	}
}
