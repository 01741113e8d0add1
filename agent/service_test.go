package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// ---------------------------------------------------------------- SendMessage (RPC-1b)

func TestSendMessageBlockingEndsInputRequired(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 3}})
	m := msg("hello world")
	task := e.send("", sendReq(m))

	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("state = %s, want TASK_STATE_INPUT_REQUIRED", task.Status.State)
	}
	if task.ID == "" || task.ContextID == "" {
		t.Fatalf("task id %q / context id %q must be set by the server", task.ID, task.ContextID)
	}
	if got := statusText(task); got != "Echo: hello world" {
		t.Errorf("status message = %q, want %q", got, "Echo: hello world")
	}
	if task.Status.Timestamp == "" {
		t.Error("status has no timestamp")
	} else if _, err := time.Parse(time.RFC3339Nano, task.Status.Timestamp); err != nil || !strings.HasSuffix(task.Status.Timestamp, "Z") {
		t.Errorf("status timestamp %q is not RFC 3339 UTC", task.Status.Timestamp)
	}
	if len(task.History) != 2 {
		t.Fatalf("history has %d messages, want 2 (user, final agent): %+v", len(task.History), task.History)
	}
	u, a := task.History[0], task.History[1]
	if u.Role != a2a.RoleUser || u.MessageID != m.MessageID || messageText(u) != "hello world" {
		t.Errorf("history[0] = %+v, want the user message %s", u, m.MessageID)
	}
	if u.TaskID != task.ID || u.ContextID != task.ContextID {
		t.Errorf("user message in history carries task %q context %q, want %q %q", u.TaskID, u.ContextID, task.ID, task.ContextID)
	}
	if a.Role != a2a.RoleAgent || messageText(a) != "Echo: hello world" {
		t.Errorf("history[1] = %+v, want the agent answer", a)
	}
	if a.MessageID == "" || a.MessageID == u.MessageID {
		t.Errorf("agent message id %q must be set and differ from the user's", a.MessageID)
	}

	// The stored task is the same.
	got := e.getTask("", task.ID)
	if got.Status.State != a2a.TaskStateInputRequired || len(got.History) != 2 {
		t.Errorf("GetTask: state %s, %d history messages; want INPUT_REQUIRED and 2", got.Status.State, len(got.History))
	}
}

func TestSendMessageReturnImmediately(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("slow"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	start := time.Now()
	task := e.send("", req)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("returnImmediately took %v", d)
	}
	if task.Status.State != a2a.TaskStateSubmitted {
		t.Errorf("state = %s, want TASK_STATE_SUBMITTED", task.Status.State)
	}
	if task.Status.Timestamp == "" {
		t.Error("submitted status has no timestamp")
	}
	g.waitStarted(t)
	g.release <- struct{}{}
	final := e.waitState("", task.ID, a2a.TaskStateInputRequired, 10*time.Second)
	if statusText(final) != "done: slow" {
		t.Errorf("final status text %q", statusText(final))
	}
}

func TestSendMessageHistoryLength(t *testing.T) {
	e := newTestEnv(t, Config{})
	t.Run("zero omits history", func(t *testing.T) {
		req := sendReq(msg("a"))
		req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: i32(0)}
		raw := e.sendRaw("", req)
		var res struct {
			Task map[string]json.RawMessage `json:"task"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Task["history"]; ok {
			t.Errorf("historyLength 0: result has a history key: %s", raw)
		}
	})
	t.Run("one keeps the last", func(t *testing.T) {
		req := sendReq(msg("b"))
		req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: i32(1)}
		task := e.send("", req)
		if len(task.History) != 1 || task.History[0].Role != a2a.RoleAgent {
			t.Fatalf("historyLength 1: history %+v, want only the final agent message", task.History)
		}
		// Storage is unchanged.
		if got := e.getTask("", task.ID); len(got.History) != 2 {
			t.Errorf("stored history has %d messages, want 2", len(got.History))
		}
	})
	t.Run("negative", func(t *testing.T) {
		req := sendReq(msg("c"))
		req.Configuration = &a2a.SendMessageConfiguration{HistoryLength: i32(-1)}
		err := e.rpcError("", a2a.MethodSendMessage, req, a2a.CodeInvalidParams)
		checkBadRequestField(t, err.Data, "historyLength")
	})
}

func TestSendMessageValidation(t *testing.T) {
	e := newTestEnv(t, Config{})
	cases := []struct {
		name   string
		params any
		code   int
		field  string
	}{
		{"no message", map[string]any{}, a2a.CodeInvalidParams, "message"},
		{"no messageId", map[string]any{"message": map[string]any{"role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}}}}, a2a.CodeInvalidParams, "message.messageId"},
		{"agent role", map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_AGENT", "parts": []any{map[string]any{"text": "x"}}}}, a2a.CodeInvalidParams, "message.role"},
		{"no parts", map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{}}}, a2a.CodeInvalidParams, "message.parts"},
		{"two contents in a part", map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x", "url": "file:///x"}}}}, a2a.CodeInvalidParams, "message.parts[0]"},
		{"remote url part", map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "x"}, map[string]any{"url": "https://example.com/a.txt"}}}}, a2a.CodeInvalidParams, "message.parts[1]"},
		{"message is a string", map[string]any{"message": "hello"}, a2a.CodeInvalidParams, "message"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.rpcError("", a2a.MethodSendMessage, c.params, c.code)
			if c.field != "" {
				checkBadRequestField(t, err.Data, c.field)
			}
		})
	}
}

func TestSendMessageUnknownRoleNamesField(t *testing.T) {
	// RPC-1a: invalid params carry a BadRequest naming the field.
	e := newTestEnv(t, Config{})
	params := map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_BOGUS", "parts": []any{map[string]any{"text": "x"}}}}
	err := e.rpcError("", a2a.MethodSendMessage, params, a2a.CodeInvalidParams)
	checkBadRequestField(t, err.Data, "message.role")
}

func TestEmptyTextMessageFails(t *testing.T) {
	e := newTestEnv(t, Config{})
	for _, text := range []string{"", "   \n\t"} {
		task := e.send("", sendReq(msg(text)))
		if task.Status.State != a2a.TaskStateFailed {
			t.Errorf("text %q: state %s, want TASK_STATE_FAILED", text, task.Status.State)
		}
		if got := statusText(task); got != "A2A server currently accepts text input only." {
			t.Errorf("text %q: status message %q", text, got)
		}
	}
}

func TestAcceptedOutputModes(t *testing.T) {
	e := newTestEnv(t, Config{})
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: []string{"image/png"}}
	e.rpcError("", a2a.MethodSendMessage, req, a2a.CodeContentTypeNotSupported)

	for _, ok := range [][]string{{"text/plain"}, {"text/*"}, {"*/*"}, {"image/png", "text/plain; charset=utf-8"}} {
		req := sendReq(msg("x"))
		req.Configuration = &a2a.SendMessageConfiguration{AcceptedOutputModes: ok}
		if task := e.send("", req); task.Status.State != a2a.TaskStateInputRequired {
			t.Errorf("acceptedOutputModes %v: state %s", ok, task.Status.State)
		}
	}
}

func TestUnsupportedPartMediaType(t *testing.T) {
	e := newTestEnv(t, Config{})
	params := map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER",
		"parts": []any{map[string]any{"text": "x", "mediaType": "image/png"}}}}
	e.rpcError("", a2a.MethodSendMessage, params, a2a.CodeContentTypeNotSupported)
}

func TestSensitiveMetadataStripped(t *testing.T) {
	// AUTH-5: credentials in metadata.<ns> never reach stored history.
	e := newTestEnv(t, Config{})
	m := msg("secret stuff")
	m.Metadata = map[string]any{ns: map[string]any{"api_key": "sk-TOPSECRET", "keep": "yes"}}
	task := e.send("", sendReq(m))
	got := e.getTask("", task.ID)
	raw := mustJSON(got)
	if strings.Contains(raw, "sk-TOPSECRET") {
		t.Errorf("stored task leaks the api_key: %s", raw)
	}
	if !strings.Contains(raw, `"keep":"yes"`) {
		t.Errorf("non-sensitive metadata was dropped: %s", raw)
	}
}

// ---------------------------------------------------------------- streaming (TURN-6a)

func TestStreamingEventOrder(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 4}, ToolTrace: true})
	m := msg("stream me please")
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(m), "req-7")
	evs := s.rpcAll(`"req-7"`)
	if len(evs) < 5 {
		t.Fatalf("got %d events, want at least 5", len(evs))
	}

	// 1. The Task, SUBMITTED.
	first := evs[0]
	if first.Task == nil || first.Task.Status.State != a2a.TaskStateSubmitted {
		t.Fatalf("first event = %s, want the Task in TASK_STATE_SUBMITTED", mustJSON(first))
	}
	taskID, ctxID := first.Task.ID, first.Task.ContextID
	if len(first.Task.History) != 1 || first.Task.History[0].MessageID != m.MessageID {
		t.Errorf("first Task history = %+v, want the user message", first.Task.History)
	}
	// 2. WORKING.
	if su := evs[1].StatusUpdate; su == nil || su.Status.State != a2a.TaskStateWorking {
		t.Fatalf("second event = %s, want a WORKING status update", mustJSON(evs[1]))
	}
	// Last: INPUT_REQUIRED with the answer.
	last := evs[len(evs)-1]
	if last.StatusUpdate == nil || last.StatusUpdate.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("last event = %s, want an INPUT_REQUIRED status update", mustJSON(last))
	}
	answer := "Echo: stream me please"
	if last.StatusUpdate.Status.Message == nil || messageText(*last.StatusUpdate.Status.Message) != answer {
		t.Errorf("final status message = %+v, want %q", last.StatusUpdate.Status.Message, answer)
	}
	// Second to last: WORKING with assistantFinal.complete and the whole answer.
	fin := evs[len(evs)-2].StatusUpdate
	if fin == nil || fin.Status.State != a2a.TaskStateWorking {
		t.Fatalf("second-to-last event = %s, want the assistantFinal WORKING update", mustJSON(evs[len(evs)-2]))
	}
	if !assistantFinal(fin.Metadata) {
		t.Errorf("assistantFinal update metadata = %v, want %s.assistantFinal.complete=true", fin.Metadata, ns)
	}
	if fin.Status.Message == nil || messageText(*fin.Status.Message) != answer || fin.Status.Message.Role != a2a.RoleAgent {
		t.Errorf("assistantFinal message = %+v, want the whole answer from ROLE_AGENT", fin.Status.Message)
	}

	// Middle: chunks, tool and usage metadata.
	var chunks strings.Builder
	var nChunks int
	toolSeen := map[string]int{}
	usageAt, lastChunkAt := -1, -1
	ids := map[string]bool{m.MessageID: true}
	for i, ev := range evs[1:] {
		i++
		su := ev.StatusUpdate
		if su == nil {
			t.Errorf("event %d is not a status update: %s", i, mustJSON(ev))
			continue
		}
		if su.TaskID != taskID || su.ContextID != ctxID {
			t.Errorf("event %d: task %q context %q, want %q %q", i, su.TaskID, su.ContextID, taskID, ctxID)
		}
		if su.Status.Timestamp == "" {
			t.Errorf("event %d: status update without timestamp", i)
		}
		if i >= len(evs)-2 {
			continue
		}
		if su.Status.State != a2a.TaskStateWorking {
			t.Errorf("event %d: state %s before the end, want WORKING", i, su.Status.State)
		}
		if assistantFinal(su.Metadata) {
			t.Errorf("event %d: assistantFinal before the last WORKING update", i)
		}
		if mm := su.Status.Message; mm != nil {
			if mm.Role != a2a.RoleAgent {
				t.Errorf("event %d: chunk role %s, want ROLE_AGENT", i, mm.Role)
			}
			if mm.MessageID == "" || ids[mm.MessageID] {
				t.Errorf("event %d: chunk message id %q is empty or reused", i, mm.MessageID)
			}
			ids[mm.MessageID] = true
			chunks.WriteString(messageText(*mm))
			nChunks++
			lastChunkAt = i
		}
		if tool := nsMap(su.Metadata, "tool"); tool != nil {
			st, _ := tool["status"].(string)
			toolSeen[st] = i
			if tool["name"] != "echo" || tool["toolUseId"] == nil {
				t.Errorf("event %d: tool metadata %v lacks name/toolUseId", i, tool)
			}
		}
		if usage := nsMap(su.Metadata, "usage"); usage != nil {
			usageAt = i
			for _, k := range []string{"inputTokens", "outputTokens", "totalTokens"} {
				if _, ok := usage[k]; !ok {
					t.Errorf("usage metadata lacks %s: %v", k, usage)
				}
			}
		}
	}
	if nChunks != 4 {
		t.Errorf("got %d text chunks, want 4", nChunks)
	}
	if chunks.String() != answer {
		t.Errorf("chunks join to %q, want %q", chunks.String(), answer)
	}
	s1, ok1 := toolSeen["started"]
	s2, ok2 := toolSeen["completed"]
	if !ok1 || !ok2 || s1 > s2 {
		t.Errorf("tool metadata: started at %d (%v), completed at %d (%v); want both, started first", s1, ok1, s2, ok2)
	}
	if usageAt < 0 || usageAt < lastChunkAt {
		t.Errorf("usage update at %d, last chunk at %d: want usage after the text", usageAt, lastChunkAt)
	}
	if fin.Status.Message != nil && ids[fin.Status.Message.MessageID] {
		t.Errorf("final answer message reuses a chunk's or the user's id %q", fin.Status.Message.MessageID)
	}

	// Stored history keeps only user + final.
	got := e.getTask("", taskID)
	if len(got.History) != 2 || got.History[0].MessageID != m.MessageID || messageText(got.History[1]) != answer {
		t.Errorf("stored history = %s, want [user, final answer]", mustJSON(got.History))
	}
	if got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("stored state %s", got.Status.State)
	}
}

func TestStreamingToolTraceOffHidesTools(t *testing.T) {
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 2}, ToolTrace: false})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("x")), 1)
	for _, ev := range s.rpcAll("1") {
		if ev.StatusUpdate != nil && nsMap(ev.StatusUpdate.Metadata, "tool") != nil {
			t.Errorf("tool metadata with tool trace off: %s", mustJSON(ev))
		}
	}
}

func TestStreamingToolFieldsTruncated(t *testing.T) {
	// TURN-6: tool input/result fields truncated to 4000 characters.
	long := strings.Repeat("é", 5000)
	in, _ := json.Marshal(map[string]string{"text": long})
	res, _ := json.Marshal(long)
	b := scriptBackend{events: []backend.Event{
		{V: 1, Type: backend.EventTool, Status: "started", ToolUseID: "t1", Name: "big", Input: in},
		{V: 1, Type: backend.EventTool, Status: "completed", ToolUseID: "t1", Name: "big", Result: res},
		{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired, Text: "ok"},
	}}
	e := newTestEnv(t, Config{Backend: b, ToolTrace: true})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("x")), 1)
	n := 0
	for _, ev := range s.rpcAll("1") {
		if ev.StatusUpdate == nil {
			continue
		}
		tool := nsMap(ev.StatusUpdate.Metadata, "tool")
		if tool == nil {
			continue
		}
		n++
		for _, k := range []string{"input", "result"} {
			if v, ok := tool[k]; ok {
				var l int
				if s, ok := v.(string); ok {
					l = len([]rune(s))
				} else {
					l = len([]rune(mustJSON(v)))
				}
				if l > 4000 {
					t.Errorf("tool %s has %d characters, want at most 4000", k, l)
				}
			}
		}
	}
	if n != 2 {
		t.Errorf("saw %d tool updates, want 2", n)
	}
}

func assistantFinal(md map[string]any) bool {
	af := nsMap(md, "assistantFinal")
	return af != nil && af["complete"] == true
}

func nsMap(md map[string]any, key string) map[string]any {
	inner, _ := md[ns].(map[string]any)
	v, _ := inner[key].(map[string]any)
	return v
}

// ---------------------------------------------------------------- GetTask (RPC-8)

func TestGetTaskHistoryLength(t *testing.T) {
	e := newTestEnv(t, Config{})
	first := e.send("", sendReq(msg("one")))
	// Continue the task twice: history grows to 6.
	for _, text := range []string{"two", "three"} {
		m := msg(text)
		m.TaskID = first.ID
		if got := e.send("", sendReq(m)); got.ID != first.ID {
			t.Fatalf("continuation made task %s, want %s", got.ID, first.ID)
		}
	}
	full := e.getTask("", first.ID)
	if len(full.History) != 6 {
		t.Fatalf("history has %d messages, want 6", len(full.History))
	}
	var two a2a.Task
	e.result("", a2a.MethodGetTask, map[string]any{"id": first.ID, "historyLength": 2}, &two)
	if len(two.History) != 2 || two.History[0].MessageID != full.History[4].MessageID || two.History[1].MessageID != full.History[5].MessageID {
		t.Errorf("historyLength 2 = %s, want the last two messages", mustJSON(two.History))
	}
	var big a2a.Task
	e.result("", a2a.MethodGetTask, map[string]any{"id": first.ID, "historyLength": 100}, &big)
	if len(big.History) != 6 {
		t.Errorf("historyLength 100 gave %d messages, want 6", len(big.History))
	}
	rep := e.call("", a2a.MethodGetTask, map[string]any{"id": first.ID, "historyLength": 0})
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(rep.Result, &raw)
	if _, ok := raw["history"]; ok {
		t.Errorf("historyLength 0: result has a history key: %s", rep.Result)
	}
	err := e.rpcError("", a2a.MethodGetTask, map[string]any{"id": first.ID, "historyLength": -3}, a2a.CodeInvalidParams)
	checkBadRequestField(t, err.Data, "historyLength")
	err = e.rpcError("", a2a.MethodGetTask, map[string]any{"id": first.ID, "historyLength": "5"}, a2a.CodeInvalidParams)
	checkBadRequestField(t, err.Data, "historyLength")
	// Not changed by reads.
	if again := e.getTask("", first.ID); len(again.History) != 6 {
		t.Errorf("history has %d messages after trimmed reads, want 6", len(again.History))
	}
}

func TestGetTaskHistoryLimit(t *testing.T) {
	e := newTestEnv(t, Config{HistoryLimit: 3})
	first := e.send("", sendReq(msg("one")))
	m := msg("two")
	m.TaskID = first.ID
	e.send("", sendReq(m))
	got := e.getTask("", first.ID)
	if len(got.History) != 3 {
		t.Errorf("omitted historyLength returned %d messages, want the cap of 3", len(got.History))
	}
}

func TestGetTaskErrors(t *testing.T) {
	e := newTestEnv(t, Config{})
	err := e.rpcError("", a2a.MethodGetTask, map[string]any{"id": "no-such-task"}, a2a.CodeTaskNotFound)
	info := checkErrorInfo(t, err.Data, "TASK_NOT_FOUND")
	if md, _ := info["metadata"].(map[string]any); md["taskId"] != "no-such-task" {
		t.Errorf("ErrorInfo metadata = %v, want taskId", info["metadata"])
	}
	e.rpcError("", a2a.MethodGetTask, map[string]any{}, a2a.CodeInvalidParams)
	e.rpcError("", a2a.MethodGetTask, nil, a2a.CodeInvalidParams)
}

// ---------------------------------------------------------------- ListTasks (RPC-9)

type listResult struct {
	Tasks         []a2a.Task `json:"tasks"`
	NextPageToken *string    `json:"nextPageToken"`
	PageSize      *int32     `json:"pageSize"`
	TotalSize     *int32     `json:"totalSize"`
}

func (e *testEnv) list(principal string, params map[string]any) (listResult, json.RawMessage) {
	e.t.Helper()
	rep := e.call(principal, a2a.MethodListTasks, params)
	if rep.Error != nil {
		e.t.Fatalf("ListTasks %v: error %d %q", params, rep.Error.Code, rep.Error.Message)
	}
	var res listResult
	if err := json.Unmarshal(rep.Result, &res); err != nil {
		e.t.Fatalf("ListTasks: %v", err)
	}
	if res.NextPageToken == nil || res.PageSize == nil || res.TotalSize == nil {
		e.t.Errorf("ListTasks result lacks nextPageToken/pageSize/totalSize: %s", trunc(string(rep.Result)))
	}
	if res.Tasks == nil && !strings.Contains(string(rep.Result), `"tasks":[]`) {
		e.t.Errorf("ListTasks result lacks tasks: %s", trunc(string(rep.Result)))
	}
	return res, rep.Result
}

func TestListTasks(t *testing.T) {
	e := newTestEnv(t, Config{})
	// Context A: 3 tasks; context B: 2 tasks; one failed task in B.
	var all []a2a.Task
	ctxA, ctxB := "ctx-a", "ctx-b"
	for i := 0; i < 3; i++ {
		all = append(all, e.send("", sendReq(inContext(msg(fmt.Sprint("a", i)), ctxA))))
	}
	for i := 0; i < 2; i++ {
		all = append(all, e.send("", sendReq(inContext(msg(fmt.Sprint("b", i)), ctxB))))
	}
	failed := e.send("", sendReq(inContext(msg(""), ctxB)))
	if failed.Status.State != a2a.TaskStateFailed {
		t.Fatalf("setup: empty message task state %s", failed.Status.State)
	}
	all = append(all, failed)
	// Another principal's task is never listed.
	other := e.send("bob", sendReq(inContext(msg("b"), ctxA)))

	t.Run("all", func(t *testing.T) {
		res, raw := e.list("", map[string]any{})
		if *res.TotalSize != 6 || len(res.Tasks) != 6 {
			t.Fatalf("totalSize %d, %d tasks; want 6", *res.TotalSize, len(res.Tasks))
		}
		if *res.PageSize != 50 {
			t.Errorf("pageSize %d, want the default 50", *res.PageSize)
		}
		if *res.NextPageToken != "" {
			t.Errorf("nextPageToken %q on the only page, want \"\"", *res.NextPageToken)
		}
		if strings.Contains(string(raw), other.ID) {
			t.Errorf("list shows bob's task %s", other.ID)
		}
		checkOrder(t, res.Tasks)
		if strings.Contains(string(raw), `"artifacts"`) {
			t.Errorf("includeArtifacts defaults to false, but the result has artifacts: %s", trunc(string(raw)))
		}
	})
	t.Run("context filter", func(t *testing.T) {
		res, _ := e.list("", map[string]any{"contextId": ctxA})
		if *res.TotalSize != 3 || len(res.Tasks) != 3 {
			t.Fatalf("contextId filter: totalSize %d, %d tasks, want 3", *res.TotalSize, len(res.Tasks))
		}
		for _, tk := range res.Tasks {
			if tk.ContextID != ctxA {
				t.Errorf("task %s in context %s", tk.ID, tk.ContextID)
			}
		}
	})
	t.Run("status filter", func(t *testing.T) {
		res, _ := e.list("", map[string]any{"status": "TASK_STATE_FAILED"})
		if *res.TotalSize != 1 || len(res.Tasks) != 1 || res.Tasks[0].ID != failed.ID {
			t.Fatalf("status FAILED: %d tasks (total %d), want only %s", len(res.Tasks), *res.TotalSize, failed.ID)
		}
		res, _ = e.list("", map[string]any{"status": "TASK_STATE_INPUT_REQUIRED", "contextId": ctxB})
		if *res.TotalSize != 2 || len(res.Tasks) != 2 {
			t.Fatalf("status INPUT_REQUIRED in B: %d tasks (total %d), want 2", len(res.Tasks), *res.TotalSize)
		}
	})
	t.Run("statusTimestampAfter inclusive", func(t *testing.T) {
		res, _ := e.list("", map[string]any{})
		// Tasks sorted newest first; take the third one's timestamp.
		pivot := res.Tasks[2]
		after, _ := e.list("", map[string]any{"statusTimestampAfter": pivot.Status.Timestamp})
		found := false
		pt, _ := time.Parse(time.RFC3339Nano, pivot.Status.Timestamp)
		for _, tk := range after.Tasks {
			if tk.ID == pivot.ID {
				found = true
			}
			ts, _ := time.Parse(time.RFC3339Nano, tk.Status.Timestamp)
			if ts.Before(pt) {
				t.Errorf("task %s at %s listed with statusTimestampAfter %s", tk.ID, tk.Status.Timestamp, pivot.Status.Timestamp)
			}
		}
		if !found {
			t.Errorf("statusTimestampAfter is not inclusive: task %s with exactly that timestamp missing", pivot.ID)
		}
		if int(*after.TotalSize) != len(after.Tasks) {
			t.Errorf("totalSize %d with %d tasks", *after.TotalSize, len(after.Tasks))
		}
		future, _ := e.list("", map[string]any{"statusTimestampAfter": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
		if len(future.Tasks) != 0 || *future.TotalSize != 0 {
			t.Errorf("future statusTimestampAfter listed %d tasks", len(future.Tasks))
		}
		e.rpcError("", a2a.MethodListTasks, map[string]any{"statusTimestampAfter": "yesterday"}, a2a.CodeInvalidParams)
	})
	t.Run("pageSize bounds", func(t *testing.T) {
		for _, n := range []int{0, -1, 101, 1000} {
			err := e.rpcError("", a2a.MethodListTasks, map[string]any{"pageSize": n}, a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "pageSize")
		}
		res, _ := e.list("", map[string]any{"pageSize": 100})
		if *res.PageSize != 100 {
			t.Errorf("pageSize %d, want 100", *res.PageSize)
		}
	})
	t.Run("pagination", func(t *testing.T) {
		seen := map[string]int{}
		var order []a2a.Task
		token := ""
		pages := 0
		for {
			params := map[string]any{"pageSize": 4}
			if token != "" {
				params["pageToken"] = token
			}
			res, _ := e.list("", params)
			pages++
			if *res.TotalSize != 6 {
				t.Errorf("page %d: totalSize %d, want 6", pages, *res.TotalSize)
			}
			if *res.PageSize != 4 {
				t.Errorf("page %d: pageSize %d, want 4", pages, *res.PageSize)
			}
			for _, tk := range res.Tasks {
				seen[tk.ID]++
				order = append(order, tk)
			}
			token = *res.NextPageToken
			if token == "" || pages > 5 {
				break
			}
		}
		if pages != 2 {
			t.Errorf("6 tasks at 4 a page took %d pages, want 2", pages)
		}
		for _, tk := range all {
			if seen[tk.ID] != 1 {
				t.Errorf("task %s listed %d times over the pages", tk.ID, seen[tk.ID])
			}
		}
		checkOrder(t, order)
	})
	t.Run("exact page boundary", func(t *testing.T) {
		res, _ := e.list("", map[string]any{"pageSize": 3})
		if *res.NextPageToken == "" {
			t.Fatal("first of two full pages has no nextPageToken")
		}
		res2, _ := e.list("", map[string]any{"pageSize": 3, "pageToken": *res.NextPageToken})
		if len(res2.Tasks) != 3 {
			t.Errorf("second page has %d tasks, want 3", len(res2.Tasks))
		}
		if *res2.NextPageToken != "" {
			// A trailing token leading to an empty page is tolerable but must then be empty.
			res3, _ := e.list("", map[string]any{"pageSize": 3, "pageToken": *res2.NextPageToken})
			if len(res3.Tasks) != 0 || *res3.NextPageToken != "" {
				t.Errorf("third page: %d tasks, token %q", len(res3.Tasks), *res3.NextPageToken)
			}
		}
	})
	t.Run("token bound to filters", func(t *testing.T) {
		res, _ := e.list("", map[string]any{"pageSize": 1, "contextId": ctxA})
		tok := *res.NextPageToken
		if tok == "" {
			t.Fatal("no token")
		}
		// Same filters, other page size: fine.
		e.list("", map[string]any{"pageSize": 2, "contextId": ctxA, "pageToken": tok})
		err := e.rpcError("", a2a.MethodListTasks, map[string]any{"pageSize": 1, "contextId": ctxB, "pageToken": tok}, a2a.CodeInvalidParams)
		checkBadRequestField(t, err.Data, "pageToken")
		e.rpcError("", a2a.MethodListTasks, map[string]any{"pageSize": 1, "pageToken": tok}, a2a.CodeInvalidParams)
		e.rpcError("", a2a.MethodListTasks, map[string]any{"pageSize": 1, "contextId": ctxA, "status": "TASK_STATE_INPUT_REQUIRED", "pageToken": tok}, a2a.CodeInvalidParams)
		// Another principal cannot replay it.
		e.rpcError("bob", a2a.MethodListTasks, map[string]any{"pageSize": 1, "contextId": ctxA, "pageToken": tok}, a2a.CodeInvalidParams)
		// Tampered.
		b := []byte(tok)
		if b[0] == 'A' {
			b[0] = 'B'
		} else {
			b[0] = 'A'
		}
		e.rpcError("", a2a.MethodListTasks, map[string]any{"pageSize": 1, "contextId": ctxA, "pageToken": string(b)}, a2a.CodeInvalidParams)
		e.rpcError("", a2a.MethodListTasks, map[string]any{"pageToken": "garbage"}, a2a.CodeInvalidParams)
		e.rpcError("", a2a.MethodListTasks, map[string]any{"pageToken": strings.Repeat("A", 600)}, a2a.CodeInvalidParams)
	})
	t.Run("historyLength", func(t *testing.T) {
		res, raw := e.list("", map[string]any{"historyLength": 0})
		if strings.Contains(string(raw), `"history"`) {
			t.Errorf("historyLength 0: tasks carry history: %s", trunc(string(raw)))
		}
		res, _ = e.list("", map[string]any{"historyLength": 1, "contextId": ctxA})
		for _, tk := range res.Tasks {
			if len(tk.History) != 1 {
				t.Errorf("historyLength 1: task %s has %d messages", tk.ID, len(tk.History))
			}
		}
		e.rpcError("", a2a.MethodListTasks, map[string]any{"historyLength": -1}, a2a.CodeInvalidParams)
	})
	t.Run("bad filters", func(t *testing.T) {
		err := e.rpcError("", a2a.MethodListTasks, map[string]any{"contextId": "bad id!"}, a2a.CodeInvalidParams)
		checkBadRequestField(t, err.Data, "contextId")
	})
	t.Run("unknown status names the field", func(t *testing.T) {
		err := e.rpcError("", a2a.MethodListTasks, map[string]any{"status": "TASK_STATE_BOGUS"}, a2a.CodeInvalidParams)
		checkBadRequestField(t, err.Data, "status")
	})
	t.Run("empty list", func(t *testing.T) {
		res, raw := e.list("nobody", map[string]any{})
		if len(res.Tasks) != 0 || *res.TotalSize != 0 || *res.NextPageToken != "" {
			t.Errorf("empty list: %s", raw)
		}
		if !strings.Contains(string(raw), `"tasks":[]`) {
			t.Errorf("empty list must carry tasks: []: %s", raw)
		}
	})
}

func TestListTasksIncludeArtifacts(t *testing.T) {
	b := scriptBackend{events: []backend.Event{
		{V: 1, Type: backend.EventArtifact, ArtifactID: "a1", Name: "out", Parts: json.RawMessage(`[{"text":"artifact body"}]`)},
		{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired, Text: "ok"},
	}}
	e := newTestEnv(t, Config{Backend: b})
	task := e.send("", sendReq(msg("make an artifact")))
	if len(task.Artifacts) != 1 {
		t.Fatalf("SendMessage result has %d artifacts, want 1", len(task.Artifacts))
	}
	_, raw := e.list("", map[string]any{})
	if strings.Contains(string(raw), `"artifacts"`) {
		t.Errorf("default list has an artifacts key: %s", trunc(string(raw)))
	}
	_, raw = e.list("", map[string]any{"includeArtifacts": false})
	if strings.Contains(string(raw), `"artifacts"`) {
		t.Errorf("includeArtifacts=false list has an artifacts key: %s", trunc(string(raw)))
	}
	res, _ := e.list("", map[string]any{"includeArtifacts": true})
	if len(res.Tasks) != 1 || len(res.Tasks[0].Artifacts) != 1 || res.Tasks[0].Artifacts[0].ArtifactID != "a1" {
		t.Errorf("includeArtifacts=true: %s", mustJSON(res.Tasks))
	}
	// GetTask always includes them.
	if got := e.getTask("", task.ID); len(got.Artifacts) != 1 {
		t.Errorf("GetTask has %d artifacts, want 1", len(got.Artifacts))
	}
}

// checkOrder asserts status timestamp descending, then id descending.
func checkOrder(t *testing.T, tasks []a2a.Task) {
	t.Helper()
	for i := 1; i < len(tasks); i++ {
		a, b := tasks[i-1], tasks[i]
		ta, _ := time.Parse(time.RFC3339Nano, a.Status.Timestamp)
		tb, _ := time.Parse(time.RFC3339Nano, b.Status.Timestamp)
		if ta.Before(tb) || (ta.Equal(tb) && a.ID < b.ID) {
			t.Errorf("order: %s (%s) before %s (%s); want status timestamp desc, then id desc", a.ID, a.Status.Timestamp, b.ID, b.Status.Timestamp)
		}
	}
}

// ---------------------------------------------------------------- CancelTask (RPC-10)

func TestCancelRunningTask(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("long")), 1)
	d, ok := s.next()
	if !ok {
		t.Fatal("stream ended before the Task")
	}
	first := s.rpcEvent(d, "1")
	if first.Task == nil {
		t.Fatalf("first event %s", d)
	}
	id := first.Task.ID
	g.waitStarted(t)

	var canceled a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": id}, &canceled)
	if canceled.Status.State != a2a.TaskStateCanceled {
		t.Errorf("CancelTask returned state %s, want CANCELED", canceled.Status.State)
	}
	if statusText(canceled) != "Task canceled." {
		t.Errorf("CancelTask status message %q, want %q", statusText(canceled), "Task canceled.")
	}
	rest := s.rpcAll("1")
	if len(rest) == 0 || eventState(rest[len(rest)-1]) != a2a.TaskStateCanceled {
		t.Fatalf("stream did not end with the CANCELED event: %s", mustJSON(rest))
	}
	if got := e.getTask("", id); got.Status.State != a2a.TaskStateCanceled || statusText(got) != "Task canceled." {
		t.Errorf("stored task: %s %q", got.Status.State, statusText(got))
	}
	// Canceling again is idempotent (A2A 1.0 §3.3.1): the same canceled
	// task, unchanged (no second status message or timestamp).
	var again a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": id}, &again)
	if stored := e.getTask("", id); again.Status.State != a2a.TaskStateCanceled || again.Status.Timestamp != stored.Status.Timestamp || again.Status.Message.MessageID != stored.Status.Message.MessageID {
		t.Errorf("second cancel = %s, want the stored canceled task %s", mustJSON(again), mustJSON(stored))
	}
}

func TestCancelInputRequiredTask(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("first")))
	var canceled a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": task.ID}, &canceled)
	if canceled.Status.State != a2a.TaskStateCanceled || statusText(canceled) != "Task canceled." {
		t.Errorf("cancel of input-required task: %s %q", canceled.Status.State, statusText(canceled))
	}
	if got := e.getTask("", task.ID); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("stored state %s", got.Status.State)
	}
	// The context accepts new messages.
	next := e.send("", sendReq(inContext(msg("again"), task.ContextID)))
	if next.Status.State != a2a.TaskStateInputRequired || next.ContextID != task.ContextID || next.ID == task.ID {
		t.Errorf("new message in the context: state %s ctx %s id %s", next.Status.State, next.ContextID, next.ID)
	}
	// The canceled task accepts no more messages.
	m := msg("more")
	m.TaskID = task.ID
	e.rpcError("", a2a.MethodSendMessage, sendReq(m), a2a.CodeUnsupportedOperation)
}

func TestCancelErrors(t *testing.T) {
	e := newTestEnv(t, Config{})
	failed := e.send("", sendReq(msg("")))
	err := e.rpcError("", a2a.MethodCancelTask, map[string]any{"id": failed.ID}, a2a.CodeTaskNotCancelable)
	checkErrorInfo(t, err.Data, "TASK_NOT_CANCELABLE")
	e.rpcError("", a2a.MethodCancelTask, map[string]any{"id": "nope"}, a2a.CodeTaskNotFound)
	mine := e.send("alice", sendReq(msg("x")))
	e.rpcError("bob", a2a.MethodCancelTask, map[string]any{"id": mine.ID}, a2a.CodeTaskNotFound)
	if got := e.getTask("alice", mine.ID); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("bob's cancel changed alice's task to %s", got.Status.State)
	}
	e.rpcError("", a2a.MethodCancelTask, map[string]any{"id": "bad/id"}, a2a.CodeInvalidParams)
}

func TestCancelForeignRunningTask(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("alice", req)
	g.waitStarted(t)
	e.rpcError("bob", a2a.MethodCancelTask, map[string]any{"id": task.ID}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodGetTask, map[string]any{"id": task.ID}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, a2a.CodeTaskNotFound)
	g.release <- struct{}{}
	e.waitState("alice", task.ID, a2a.TaskStateInputRequired, 10*time.Second)
}

func TestCancelBeforeTurnStarts(t *testing.T) {
	// A task waiting for its busy context is canceled, not failed.
	g := newGate()
	e := newTestEnv(t, Config{Backend: g, ContextWait: 5 * time.Second})
	req := sendReq(inContext(msg("one"), "busy-ctx"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	t1 := e.send("", req)
	g.waitStarted(t)
	req2 := sendReq(inContext(msg("two"), "busy-ctx"))
	req2.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	t2 := e.send("", req2)
	var c a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": t2.ID}, &c)
	if c.Status.State != a2a.TaskStateCanceled {
		t.Errorf("waiting task canceled to %s, want CANCELED", c.Status.State)
	}
	g.release <- struct{}{}
	e.waitState("", t1.ID, a2a.TaskStateInputRequired, 10*time.Second)
}

// ---------------------------------------------------------------- SubscribeToTask (RPC-11)

func TestSubscribeRunningTask(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("sub"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	g.waitStarted(t)

	s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, "s1")
	d, ok := s.next()
	if !ok {
		t.Fatal("subscription ended at once")
	}
	first := s.rpcEvent(d, `"s1"`)
	if first.Task == nil || first.Task.ID != task.ID || first.Task.Status.State != a2a.TaskStateWorking {
		t.Fatalf("first event %s, want the current Task (WORKING)", d)
	}
	g.release <- struct{}{}
	rest := s.rpcAll(`"s1"`)
	if len(rest) == 0 {
		t.Fatal("no live events after the Task")
	}
	if last := rest[len(rest)-1]; eventState(last) != a2a.TaskStateInputRequired {
		t.Errorf("last event %s, want INPUT_REQUIRED (then close)", mustJSON(last))
	}
	var sawFinal bool
	for _, ev := range rest {
		if ev.StatusUpdate != nil && assistantFinal(ev.StatusUpdate.Metadata) {
			sawFinal = true
		}
	}
	if !sawFinal {
		t.Error("subscriber missed the assistantFinal update")
	}
}

func TestSubscribeTwoStreamsSameEvents(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("fan out"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	g.waitStarted(t)
	s1 := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 1)
	s2 := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 2)
	d1, _ := s1.next()
	d2, _ := s2.next()
	s1.rpcEvent(d1, "1")
	s2.rpcEvent(d2, "2")
	g.release <- struct{}{}
	a, b := s1.rpcAll("1"), s2.rpcAll("2")
	if mustJSON(a) != mustJSON(b) {
		t.Errorf("two subscribers got different events:\n%s\n%s", mustJSON(a), mustJSON(b))
	}
}

// RPC-11 (revised): a stream on an input-required task starts with the Task
// and stays open (it used to close at once); see subscribe_wait_test.go for
// what ends it.
func TestSubscribeInputRequiredTask(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("x")))
	s := e.rpcStream("", a2a.MethodSubscribeToTask, map[string]any{"id": task.ID}, 9)
	d, ok := s.next()
	if !ok {
		t.Fatal("subscription to an input-required task ended without an event")
	}
	if first := s.rpcEvent(d, "9"); first.Task == nil || first.Task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first event %s, want the Task (INPUT_REQUIRED)", d)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		s.next()
	}()
	select {
	case <-ended:
		t.Fatal("subscription to an input-required task closed without new work")
	case <-time.After(300 * time.Millisecond):
	}
	s.close()
	<-ended
}

func TestSubscribeErrorsArePlainJSON(t *testing.T) {
	e := newTestEnv(t, Config{})
	failed := e.send("", sendReq(msg("")))
	for _, c := range []struct {
		id   string
		code int
		who  string
	}{
		{failed.ID, a2a.CodeUnsupportedOperation, ""},
		{"unknown-task", a2a.CodeTaskNotFound, ""},
		{failed.ID, a2a.CodeTaskNotFound, "mallory"},
	} {
		hr := e.do("POST", "/", []byte(rpcBody(5, a2a.MethodSubscribeToTask, map[string]any{"id": c.id})), v1Headers(c.who))
		if ct := hr.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("subscribe %s as %q: Content-Type %q, want application/json", c.id, c.who, ct)
		}
		var rep rpcReply
		if err := json.Unmarshal(hr.body, &rep); err != nil || rep.Error == nil || rep.Error.Code != c.code {
			t.Errorf("subscribe %s as %q: %s, want error %d", c.id, c.who, hr.body, c.code)
		}
	}
}

// ---------------------------------------------------------------- follow-ups (RPC-1b)

func TestFollowUps(t *testing.T) {
	e := newTestEnv(t, Config{})
	first := e.send("", sendReq(msg("one")))

	t.Run("same context, no task id: new task", func(t *testing.T) {
		next := e.send("", sendReq(inContext(msg("two"), first.ContextID)))
		if next.ID == first.ID || next.ContextID != first.ContextID {
			t.Errorf("got task %s in %s; want a new task in %s", next.ID, next.ContextID, first.ContextID)
		}
		if next.Status.State != a2a.TaskStateInputRequired || len(next.History) != 2 {
			t.Errorf("new task: %s with %d messages", next.Status.State, len(next.History))
		}
	})
	t.Run("task id of an input-required task continues it", func(t *testing.T) {
		m := msg("continue")
		m.TaskID = first.ID
		got := e.send("", sendReq(m))
		if got.ID != first.ID || got.ContextID != first.ContextID {
			t.Fatalf("continuation: task %s ctx %s, want %s %s", got.ID, got.ContextID, first.ID, first.ContextID)
		}
		if len(got.History) != 4 {
			t.Errorf("history has %d messages, want 4", len(got.History))
		}
		if got.Status.State != a2a.TaskStateInputRequired || statusText(got) != "Echo: continue" {
			t.Errorf("continued task: %s %q", got.Status.State, statusText(got))
		}
	})
	t.Run("task id with its own context id", func(t *testing.T) {
		m := inContext(msg("again"), first.ContextID)
		m.TaskID = first.ID
		if got := e.send("", sendReq(m)); got.ID != first.ID {
			t.Errorf("got task %s", got.ID)
		}
	})
	t.Run("task id with another context", func(t *testing.T) {
		m := inContext(msg("x"), "some-other-context")
		m.TaskID = first.ID
		e.rpcError("", a2a.MethodSendMessage, sendReq(m), a2a.CodeInvalidParams)
	})
	t.Run("terminal task id", func(t *testing.T) {
		failed := e.send("", sendReq(msg("")))
		m := msg("x")
		m.TaskID = failed.ID
		err := e.rpcError("", a2a.MethodSendMessage, sendReq(m), a2a.CodeUnsupportedOperation)
		checkErrorInfo(t, err.Data, "UNSUPPORTED_OPERATION")
	})
	t.Run("unknown task id", func(t *testing.T) {
		m := msg("x")
		m.TaskID = "never-existed"
		e.rpcError("", a2a.MethodSendMessage, sendReq(m), a2a.CodeTaskNotFound)
	})
	t.Run("foreign task id", func(t *testing.T) {
		m := msg("x")
		m.TaskID = first.ID
		e.rpcError("bob", a2a.MethodSendMessage, sendReq(m), a2a.CodeTaskNotFound)
	})
}

// ---------------------------------------------------------------- ownership (AUTH-4)

func TestOwnership(t *testing.T) {
	e := newTestEnv(t, Config{})
	a := e.send("alice", sendReq(msg("mine")))
	e.rpcError("bob", a2a.MethodGetTask, map[string]any{"id": a.ID}, a2a.CodeTaskNotFound)
	e.rpcError("", a2a.MethodGetTask, map[string]any{"id": a.ID}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodCancelTask, map[string]any{"id": a.ID}, a2a.CodeTaskNotFound)
	e.rpcError("bob", a2a.MethodSubscribeToTask, map[string]any{"id": a.ID}, a2a.CodeTaskNotFound)
	res, raw := e.list("bob", map[string]any{})
	if len(res.Tasks) != 0 || strings.Contains(string(raw), a.ID) {
		t.Errorf("bob lists alice's task: %s", raw)
	}
	res, _ = e.list("bob", map[string]any{"contextId": a.ContextID})
	if len(res.Tasks) != 0 {
		t.Errorf("bob lists alice's context")
	}
	// Bob using alice's context id gets his own context, not alice's history.
	b := e.send("bob", sendReq(inContext(msg("hers?"), a.ContextID)))
	if b.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("bob's message in a context id alice uses: %s %q", b.Status.State, statusText(b))
	}
	if got := e.getTask("alice", a.ID); got.Status.State != a2a.TaskStateInputRequired {
		t.Errorf("alice's task changed: %s", got.Status.State)
	}
	if r, _ := e.list("alice", map[string]any{"contextId": a.ContextID}); len(r.Tasks) != 1 {
		t.Errorf("alice's context lists %d tasks, want only hers", len(r.Tasks))
	}
}

// ---------------------------------------------------------------- ids (RPC-7)

func TestIDValidation(t *testing.T) {
	e := newTestEnv(t, Config{})
	long := strings.Repeat("a", 129)
	ok128 := strings.Repeat("b", 128)
	for _, bad := range []string{long, "has space", "slash/x", "emoji😀", "semi;colon", "quote\"", "new\nline"} {
		t.Run(fmt.Sprintf("context %q", trunc(bad)), func(t *testing.T) {
			err := e.rpcError("", a2a.MethodSendMessage, sendReq(inContext(msg("x"), bad)), a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "message.contextId")
			m := msg("x")
			m.TaskID = bad
			err = e.rpcError("", a2a.MethodSendMessage, sendReq(m), a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "message.taskId")
			err = e.rpcError("", a2a.MethodGetTask, map[string]any{"id": bad}, a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "id")
			err = e.rpcError("", a2a.MethodCancelTask, map[string]any{"id": bad}, a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "id")
			err = e.rpcError("", a2a.MethodSubscribeToTask, map[string]any{"id": bad}, a2a.CodeInvalidParams)
			checkBadRequestField(t, err.Data, "id")
		})
	}
	// Allowed characters and the maximum length.
	for _, good := range []string{ok128, "a.b:c-d_e", "X"} {
		task := e.send("", sendReq(inContext(msg("x"), good)))
		if task.ContextID != good {
			t.Errorf("context id %q came back as %q", good, task.ContextID)
		}
	}
}

// ---------------------------------------------------------------- push & extended card

func TestPushConfigMethodsUnsupported(t *testing.T) {
	e := newTestEnv(t, Config{})
	task := e.send("", sendReq(msg("x")))
	for _, m := range []string{a2a.MethodCreatePushConfig, a2a.MethodGetPushConfig, a2a.MethodListPushConfigs, a2a.MethodDeletePushConfig} {
		err := e.rpcError("", m, map[string]any{"taskId": task.ID, "id": "c1", "url": "https://example.com/hook"}, a2a.CodePushNotificationNotSupported)
		checkErrorInfo(t, err.Data, "PUSH_NOTIFICATION_NOT_SUPPORTED")
	}
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{TaskPushNotificationConfig: &a2a.TaskPushNotificationConfig{URL: "https://example.com/hook"}}
	e.rpcError("", a2a.MethodSendMessage, req, a2a.CodePushNotificationNotSupported)
}

func TestExtendedCardUnsupported(t *testing.T) {
	e := newTestEnv(t, Config{})
	err := e.rpcError("", a2a.MethodGetExtendedAgentCard, nil, a2a.CodeUnsupportedOperation)
	checkErrorInfo(t, err.Data, "UNSUPPORTED_OPERATION")
}

// ---------------------------------------------------------------- turn outcomes (TURN-8)

func TestTurnOutcomes(t *testing.T) {
	cases := []struct {
		name  string
		b     backend.Backend
		state a2a.TaskState
		text  string
	}{
		{"completed", scriptBackend{events: []backend.Event{{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "all done"}}}, a2a.TaskStateCompleted, "all done"},
		{"no end, nil error", scriptBackend{events: []backend.Event{{V: 1, Type: backend.EventText, Text: "partial answer"}}}, a2a.TaskStateInputRequired, "partial answer"},
		{"transient", scriptBackend{events: []backend.Event{{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeFailed, Error: &backend.EventError{Kind: backend.ErrorKindTransient, Message: "upstream 503 /secret/path"}}}}, a2a.TaskStateInputRequired, "A temporary error occurred. Please retry."},
		{"auth", scriptBackend{events: []backend.Event{{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeFailed, Error: &backend.EventError{Kind: backend.ErrorKindAuth, Message: "bad key sk-123"}}}}, a2a.TaskStateFailed, "Authentication required. Configure credentials and retry."},
		{"rejected", scriptBackend{events: []backend.Event{{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeRejected}}}, a2a.TaskStateRejected, "The agent rejected the task."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newTestEnv(t, Config{Backend: c.b})
			task := e.send("", sendReq(msg("x")))
			if task.Status.State != c.state || statusText(task) != c.text {
				t.Errorf("got %s %q, want %s %q", task.Status.State, statusText(task), c.state, c.text)
			}
		})
	}
	t.Run("internal error is sanitised", func(t *testing.T) {
		e := newTestEnv(t, Config{Backend: scriptBackend{err: fmt.Errorf("open /etc/shadow: permission denied")}})
		task := e.send("", sendReq(msg("x")))
		if task.Status.State != a2a.TaskStateFailed {
			t.Errorf("state %s, want FAILED", task.Status.State)
		}
		if txt := statusText(task); strings.Contains(txt, "/etc/shadow") || !strings.Contains(txt, "correlation id") {
			t.Errorf("status message %q: want a generic message with a correlation id and no detail", txt)
		}
	})
}

// ---------------------------------------------------------------- hub shutdown (RPC-12)

func TestHubCloseFailsRunningTurns(t *testing.T) {
	g := newGate()
	e := newTestEnv(t, Config{Backend: g})
	req := sendReq(msg("x"))
	req.Configuration = &a2a.SendMessageConfiguration{ReturnImmediately: true}
	task := e.send("", req)
	g.waitStarted(t)
	_ = e.hub.Close()
	got, err := e.st.GetTask(t.Context(), "", task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.State != a2a.TaskStateFailed || statusText(*got) != InterruptedMessage {
		t.Errorf("after Hub.Close: %s %q, want FAILED %q", got.Status.State, statusText(*got), InterruptedMessage)
	}
}

func TestNewHubFailsInterruptedTasks(t *testing.T) {
	st := newStore(t)
	task := &a2a.Task{ID: "left-running", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: a2a.Timestamp(time.Now())},
		History: []a2a.Message{*msg("x")}}
	if err := st.PutTask(t.Context(), "alice", task); err != nil {
		t.Fatal(err)
	}
	e := newTestEnvOn(t, st, Config{}, false)
	got := e.getTask("alice", "left-running")
	if got.Status.State != a2a.TaskStateFailed || statusText(got) != InterruptedMessage {
		t.Errorf("interrupted task after restart: %s %q", got.Status.State, statusText(got))
	}
}

// stubbornBackend ignores cancellation until released.
type stubbornBackend struct {
	started chan string
	release chan struct{}
}

func (b *stubbornBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	b.started <- req.TaskID
	<-b.release
	_ = emit(backend.Event{V: 1, Type: backend.EventText, Text: "late text"})
	return emit(backend.Event{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "late answer"})
}

func TestCancelDrainTimeout(t *testing.T) {
	// RPC-10: CancelTask returns within the drain time; the task is CANCELED
	// from then on, for every reader, and streams get the final event.
	b := &stubbornBackend{started: make(chan string, 4), release: make(chan struct{})}
	e := newTestEnv(t, Config{Backend: b, CancelDrain: 100 * time.Millisecond})
	t.Cleanup(func() {
		select {
		case <-b.release:
		default:
			close(b.release)
		}
	})
	s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(inContext(msg("x"), "stubborn")), 1)
	d, _ := s.next()
	id := s.rpcEvent(d, "1").Task.ID
	<-b.started

	start := time.Now()
	var c a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": id}, &c)
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("CancelTask took %v with a 100ms drain", took)
	}
	if c.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("CancelTask returned %s", c.Status.State)
	}
	if got := e.getTask("", id); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("GetTask right after CancelTask returned CANCELED: state %s", got.Status.State)
	}
	// A second cancel: idempotent (A2A 1.0 §3.3.1), the canceled task.
	var again a2a.Task
	e.result("", a2a.MethodCancelTask, map[string]any{"id": id}, &again)
	if again.ID != id || again.Status.State != a2a.TaskStateCanceled {
		t.Errorf("second CancelTask = %s %s, want the canceled task", again.ID, again.Status.State)
	}
	// The stream gets the CANCELED event without waiting for the backend.
	got := make(chan []a2a.StreamResponse, 1)
	go func() { got <- s.rpcAll("1") }()
	select {
	case evs := <-got:
		if len(evs) == 0 || eventState(evs[len(evs)-1]) != a2a.TaskStateCanceled {
			t.Errorf("stream end: %s", mustJSON(evs))
		}
	case <-time.After(2 * time.Second):
		t.Error("stream still open 2s after CancelTask returned: no final CANCELED event")
	}
	close(b.release)
	if !noneIn("(*Service).execute") {
		t.Fatal("the released turn never ended")
	}
	if got := e.getTask("", id); got.Status.State != a2a.TaskStateCanceled {
		t.Errorf("after the backend finished late: state %s, want CANCELED", got.Status.State)
	}
	// Late output does not reach history.
	if got := e.getTask("", id); strings.Contains(mustJSON(got), "late") {
		t.Errorf("late backend output recorded on the canceled task: %s", mustJSON(got))
	}
}

func TestConcurrentContinuationsKeepHistory(t *testing.T) {
	// Follow-ups to the same input-required task must not overwrite each
	// other's history (lost update).
	e := newTestEnv(t, Config{ContextWait: 5 * time.Second})
	first := e.send("", sendReq(msg("start")))
	const n = 12
	type outcome struct {
		task *a2a.Task
		err  *rpcErrorT
	}
	results := make(chan outcome, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			m := msg(fmt.Sprint("follow-up ", i))
			m.TaskID = first.ID
			rep := e.call("", a2a.MethodSendMessage, sendReq(m))
			if rep.Error != nil {
				results <- outcome{err: rep.Error}
				return
			}
			var res a2a.SendMessageResponse
			_ = json.Unmarshal(rep.Result, &res)
			results <- outcome{task: res.Task}
		}(i)
	}
	wg.Wait()
	close(results)
	ok := 0
	for r := range results {
		switch {
		case r.err != nil:
			if r.err.Code != a2a.CodeUnsupportedOperation {
				t.Errorf("concurrent follow-up error %d %q", r.err.Code, r.err.Message)
			}
		case r.task.Status.State == a2a.TaskStateInputRequired:
			ok++
		default:
			t.Logf("follow-up ended %s %q", r.task.Status.State, statusText(*r.task))
		}
	}
	final := e.getTask("", first.ID)
	var users int
	for _, m := range final.History {
		if m.Role == a2a.RoleUser {
			users++
		}
	}
	if users != 1+ok {
		t.Errorf("%d follow-ups succeeded but the stored history holds %d user messages (want %d): updates were lost", ok, users, 1+ok)
	}
}

func TestThinkingAndPermissionMetadata(t *testing.T) {
	yes := true
	events := []backend.Event{
		{V: 1, Type: backend.EventThinking, Text: "pondering"},
		{V: 1, Type: backend.EventPermission, ToolUseID: "t1", ToolName: "shell", AutoApproved: &yes},
		{V: 1, Type: "some_future_type", Text: "ignored"},
		{V: 1, Type: backend.EventText, Text: "answer"},
		{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired},
		{V: 1, Type: backend.EventText, Text: " after end"},
	}
	for _, raw := range []bool{false, true} {
		t.Run(fmt.Sprint("rawThinking=", raw), func(t *testing.T) {
			e := newTestEnv(t, Config{Backend: scriptBackend{events: events}, RawThinking: raw, ToolTrace: true})
			s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("x")), 1)
			var thinking, perm map[string]any
			for _, ev := range s.rpcAll("1") {
				if ev.StatusUpdate == nil {
					continue
				}
				if th := nsMap(ev.StatusUpdate.Metadata, "thinking"); th != nil {
					thinking = th
				}
				if p := nsMap(ev.StatusUpdate.Metadata, "permission"); p != nil {
					perm = p
				}
				if m := ev.StatusUpdate.Status.Message; m != nil && strings.Contains(messageText(*m), "ignored") {
					t.Errorf("unknown event type surfaced: %s", mustJSON(ev))
				}
			}
			if raw {
				if thinking == nil || thinking["type"] != "raw_thinking" || thinking["text"] != "pondering" {
					t.Errorf("thinking metadata %v, want {type: raw_thinking, text: pondering}", thinking)
				}
			} else if thinking != nil {
				t.Errorf("thinking exposed with raw thinking off: %v", thinking)
			}
			if perm == nil || perm["autoApproved"] != true || perm["toolName"] != "shell" {
				t.Errorf("permission metadata %v", perm)
			}
		})
	}
	e := newTestEnv(t, Config{Backend: scriptBackend{events: events}})
	got := e.send("", sendReq(msg("x")))
	if statusText(got) != "answer" {
		t.Errorf("final answer %q, want %q (events after end are ignored)", statusText(got), "answer")
	}
}

func TestHubCloseClosesSessions(t *testing.T) {
	// OPS-3: no process leaks at shutdown: live contexts' backend sessions
	// (e.g. per-context exec processes) are closed by Hub.Close.
	sb := &sessionBackend{}
	e := newTestEnv(t, Config{Backend: sb})
	e.send("", sendReq(inContext(msg("x"), "s1")))
	e.send("", sendReq(inContext(msg("x"), "s2")))
	_ = e.hub.Close()
	if _, closed := sb.snapshot(); closed != 2 {
		t.Errorf("Hub.Close closed %d of 2 live sessions", closed)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		st := newStore(t)
		hub, err := NewHub(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		h := NewHTTPHandler(NewService(hub, Config{Backend: backend.EchoBackend{Chunks: 2}}), TransportConfig{KeepAlive: 5 * time.Millisecond})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.Serve(w, r, "") }))
		e := &testEnv{t: t, st: st, hub: hub, h: h, srv: srv}
		for i := 0; i < 5; i++ {
			e.send("", sendReq(msg("x")))
			s := e.rpcStream("", a2a.MethodSendStreamingMessage, sendReq(msg("y")), 1)
			s.rpcAll("1")
			s.close()
		}
		srv.Close()
		_ = hub.Close()
		_ = st.Close() // the store's writer and checkpointer are goroutines too
	}()
	deadline := time.Now().Add(3 * time.Second)
	for {
		n := runtime.NumGoroutine()
		if n <= before+3 {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines before, %d after closing everything:\n%s", before, n, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
func TestCancelRacingContinuation(t *testing.T) {
	// A canceled task is terminal and stays so: when CancelTask reports
	// CANCELED, a follow-up racing with it must not bring the task back.
	e := newTestEnv(t, Config{Backend: backend.EchoBackend{Chunks: 1, Delay: time.Millisecond}})
	for i := 0; i < 40; i++ {
		task := e.send("", sendReq(msg("start")))
		var wg sync.WaitGroup
		var cancelRep, contRep rpcReply
		wg.Add(2)
		go func() {
			defer wg.Done()
			m := msg("go on")
			m.TaskID = task.ID
			contRep = e.call("", a2a.MethodSendMessage, sendReq(m))
		}()
		go func() {
			defer wg.Done()
			cancelRep = e.call("", a2a.MethodCancelTask, map[string]any{"id": task.ID})
		}()
		wg.Wait()
		final := e.getTask("", task.ID)
		if cancelRep.Error == nil {
			var c a2a.Task
			_ = json.Unmarshal(cancelRep.Result, &c)
			if c.Status.State == a2a.TaskStateCanceled && final.Status.State != a2a.TaskStateCanceled {
				var cont a2a.SendMessageResponse
				_ = json.Unmarshal(contRep.Result, &cont)
				contState := errText(contRep.Error)
				if cont.Task != nil {
					contState = string(cont.Task.Status.State)
				}
				t.Fatalf("iteration %d: CancelTask answered CANCELED but the task ended %s %q (the racing follow-up got %s)", i, final.Status.State, statusText(final), contState)
			}
		}
	}
}

func errText(e *rpcErrorT) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf("error %d %q", e.Code, e.Message)
}
