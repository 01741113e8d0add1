package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// ndjsonBackend plays the turn-event lines of the user message's text as
// an exec agent would write them (blank lines skipped, a line that is not
// an event object fails the turn).
type ndjsonBackend struct{}

func (ndjsonBackend) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	text := ""
	if req.Message != nil && len(req.Message.Parts) > 0 && req.Message.Parts[0].Text != nil {
		text = *req.Message.Parts[0].Text
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		var ev backend.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.V != backend.EventVersion || ev.Type == "" {
			return &backend.ProtocolError{Err: errors.New("bad line")}
		}
		if err := emit(ev); err != nil {
			return err
		}
	}
	return nil
}

// TURN-1, TURN-6, TURN-7, TURN-8: whatever events a backend emits, in
// whatever order, the turn ends (no hang), never panics, and ends in a
// task whose state is valid and whose JSON rendering is valid, or in a
// clean A2A error.
func FuzzTurnEvents(f *testing.F) {
	for _, s := range []string{
		"{\"v\":1,\"type\":\"text\",\"text\":\"hi\"}\n{\"v\":1,\"type\":\"end\",\"outcome\":\"completed\"}",
		"{\"v\":1,\"type\":\"thinking\",\"text\":\"hm\"}\n{\"v\":1,\"type\":\"tool\",\"status\":\"started\",\"toolUseId\":\"t\",\"name\":\"x\"}\n{\"v\":1,\"type\":\"tool\",\"status\":\"completed\",\"toolUseId\":\"t\",\"result\":{\"ok\":true}}",
		"{\"v\":1,\"type\":\"artifact\",\"artifactId\":\"a\",\"name\":\"d\",\"mediaType\":\"image/png\",\"filename\":\"d.png\",\"base64\":\"iVBORw0KGgo=\"}\n{\"v\":1,\"type\":\"end\",\"outcome\":\"input_required\",\"text\":\"more?\"}",
		"{\"v\":1,\"type\":\"message\",\"text\":\"direct\",\"parts\":[{\"data\":{\"k\":1}}]}\n{\"v\":1,\"type\":\"end\",\"outcome\":\"completed\"}",
		"{\"v\":1,\"type\":\"usage\",\"inputTokens\":1,\"outputTokens\":2,\"totalTokens\":3}\n{\"v\":1,\"type\":\"error\",\"kind\":\"auth\",\"text\":\"no\"}",
		"{\"v\":1,\"type\":\"permission\",\"toolName\":\"x\",\"autoApproved\":true}\n{\"v\":1,\"type\":\"end\",\"outcome\":\"failed\"}",
		"{\"v\":1,\"type\":\"end\",\"outcome\":\"bogus\"}\n{\"v\":1,\"type\":\"text\",\"text\":\"after end\"}",
		"{\"v\":1,\"type\":\"artifact\",\"artifactId\":\"a\",\"base64\":\"!!\"}", "{\"v\":1,\"type\":\"future\"}", "not json",
	} {
		f.Add(s)
	}
	svc := fuzzTurnService(f)
	f.Fuzz(func(t *testing.T, lines string) {
		runFuzzTurn(t, svc, lines)
	})
}

// FuzzTurnEventSequences is FuzzTurnEvents over well-formed events: each
// byte of ops picks an event type and its fields (from a, b and n), so the
// fuzzer explores orders and field values rather than JSON syntax.
func FuzzTurnEventSequences(f *testing.F) {
	f.Add([]byte{0, 7}, "hi", "completed", int64(1))
	f.Add([]byte{2, 3, 2, 6, 7}, "t1", "input_required", int64(-1))
	f.Add([]byte{5, 5, 5, 7, 0}, "image/png", "iVBORw0KGgo=", int64(3))
	f.Add([]byte{4, 8, 9, 6}, "auth", "x", int64(1<<62))
	svc := fuzzTurnService(f)
	statuses := []string{"started", "input_delta", "input_complete", "progress", "completed", "failed", "bogus"}
	outcomes := []string{"completed", "input_required", "failed", "canceled", "auth_required", "rejected"}
	f.Fuzz(func(t *testing.T, ops []byte, a, b string, n int64) {
		if len(ops) > 64 {
			ops = ops[:64]
		}
		var sb strings.Builder
		for i, op := range ops {
			ev := backend.Event{V: backend.EventVersion}
			k := int(n) + i
			if k < 0 {
				k = -k
			}
			switch op % 10 {
			case 0:
				ev.Type, ev.Text = backend.EventText, a
			case 1:
				ev.Type, ev.Text = backend.EventThinking, b
			case 2:
				ev.Type, ev.Status, ev.ToolUseID, ev.Name = backend.EventTool, statuses[k%len(statuses)], a, b
				ev.Input, ev.Result = json.RawMessage(`{"a":1}`), json.RawMessage(`"r"`)
			case 3:
				yes := op&16 != 0
				ev.Type, ev.ToolName, ev.AutoApproved = backend.EventPermission, a, &yes
			case 4:
				ev.Type, ev.InputTokens, ev.OutputTokens, ev.TotalTokens = backend.EventUsage, n, -n, n*2
			case 5:
				ev.Type, ev.ArtifactID, ev.Name, ev.MediaType, ev.Base64 = backend.EventArtifact, a, a, a, b
				ev.Append, ev.LastChunk = op&16 != 0, op&32 != 0
			case 6:
				ev.Type, ev.ArtifactID, ev.Text, ev.Filename = backend.EventArtifact, b, a, b
			case 7:
				ev.Type, ev.Outcome, ev.Text = backend.EventEnd, outcomes[k%len(outcomes)], a
			case 8:
				ev.Type, ev.Text, ev.Parts = backend.EventMessage, a, json.RawMessage(`[{"data":{"k":1}},{"text":"x"}]`)
			case 9:
				ev.Type, ev.Outcome, ev.Error = backend.EventEnd, b, &backend.EventError{Kind: a, Message: b}
			}
			line, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			sb.Write(line)
			sb.WriteByte('\n')
		}
		runFuzzTurn(t, svc, sb.String())
	})
}

// fuzzTurnService is a service whose backend is ndjsonBackend, shared by
// every input of one fuzz target.
func fuzzTurnService(f *testing.F) *Service {
	st, err := store.OpenSQLite(filepath.Join(f.TempDir(), "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		f.Fatal(err)
	}
	hub, err := NewHub(context.Background(), st)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		_ = hub.Close()
		_ = st.Close()
	})
	return NewService(hub, Config{Backend: ndjsonBackend{}, ContextWait: 10 * time.Millisecond, ArtifactDir: f.TempDir(), InputDir: f.TempDir()})
}

// runFuzzTurn runs one turn whose backend plays lines and checks how it
// ends.
func runFuzzTurn(t *testing.T, svc *Service, lines string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m := &a2a.Message{MessageID: newID(), Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(lines)}}
	res, err := svc.SendMessage(ctx, Call{Principal: "fuzz"}, &a2a.SendMessageRequest{Message: m})
	if ctx.Err() != nil {
		t.Fatal("the turn did not end within 10s")
	}
	if err != nil {
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Message == "" {
			t.Fatalf("not a clean A2A error: %v", err)
		}
		return
	}
	if res == nil || (res.Task == nil) == (res.Message == nil) {
		t.Fatalf("neither or both of task and message: %+v", res)
	}
	b, err := json.Marshal(res)
	if err != nil || !json.Valid(b) || bytes.Contains(b, []byte(`"state":""`)) {
		t.Fatalf("rendering %s: %v", b, err)
	}
	if res.Task != nil && !res.Task.Status.State.Valid() {
		t.Fatalf("task without a state: %s", b)
	}
}
