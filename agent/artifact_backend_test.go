package agent

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// Tests of TURN-7 (artifact payloads and inline parts) and of the message
// event (Appendix A) through a scripted backend.

type artScript struct {
	events func(req *backend.TurnRequest) []backend.Event
	err    error
}

func (b artScript) RunTurn(ctx context.Context, req *backend.TurnRequest, emit backend.Emit) error {
	for _, ev := range b.events(req) {
		if err := emit(ev); err != nil {
			return err
		}
	}
	return b.err
}

func artifactEnv(t *testing.T, urls string, events func(*backend.TurnRequest) []backend.Event) (*testEnv, string) {
	t.Helper()
	dir := t.TempDir()
	e := newTestEnv(t, Config{Backend: artScript{events: events}, ArtifactDir: dir, ArtifactURLs: urls, MaxArtifactBytes: 16})
	return e, dir
}

func TestArtifactPayloadLimit(t *testing.T) {
	for _, n := range []int{15, 16, 17} {
		for _, enc := range []string{"text", "base64"} {
			payload := strings.Repeat("z", n)
			e, dir := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
				ev := backend.Event{V: 1, Type: backend.EventArtifact, ArtifactID: "a1", Name: "out", MediaType: "text/plain", Filename: "out.txt"}
				if enc == "text" {
					ev.Text = payload
				} else {
					ev.Base64 = base64.StdEncoding.EncodeToString([]byte(payload))
				}
				return []backend.Event{ev, {V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "done"}}
			})
			if n > 16 {
				// Over the limit: invalid backend output (-32006 on a blocking send).
				task := e.sendInvalid(sendReq(msg("go")), payload)
				if len(task.Artifacts) != 0 {
					t.Errorf("%s payload of %d bytes (limit 16): %d artifacts", enc, n, len(task.Artifacts))
				}
				continue
			}
			task := e.send("", sendReq(msg("go")))
			if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
				t.Fatalf("%s payload of %d bytes: %s %v", enc, n, task.Status.State, task.Artifacts)
			}
			art := task.Artifacts[0]
			sum := sha256.Sum256([]byte(payload))
			sha := hex.EncodeToString(sum[:])
			md, _ := art.Metadata["iac_code"].(map[string]any)
			if md["sha256"] != sha || md["mediaType"] != "text/plain" || md["byteSize"] != float64(n) {
				t.Errorf("metadata = %v", md)
			}
			p := filepath.Join(dir, sha[:2], sha)
			fi, err := os.Stat(p)
			if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != int64(n) {
				t.Fatalf("stored payload: %v %v", fi, err)
			}
			if u := art.Parts[0].URL; !strings.HasSuffix(u, "/artifacts/"+task.ID+"/a1") || !strings.HasPrefix(u, "http://127.0.0.1:") {
				t.Errorf("url = %q", u)
			}
			if b, _ := json.Marshal(task); strings.Contains(string(b), payload) {
				t.Error("payload bytes repeated in the task")
			}
		}
	}
}

func TestArtifactFileURLsAndAppend(t *testing.T) {
	e, dir := artifactEnv(t, "file", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{
			{V: 1, Type: backend.EventArtifact, ArtifactID: "log", MediaType: "text/plain", Text: "one,"},
			{V: 1, Type: backend.EventArtifact, ArtifactID: "log", MediaType: "text/plain", Text: "two", Append: true, LastChunk: true},
			{V: 1, Type: backend.EventArtifact, ArtifactID: "inline", Parts: json.RawMessage(`[{"text":"t"},{"url":"https://example.com/x"}]`)},
		}
	})
	task := e.send("", sendReq(msg("go")))
	if task.Status.State != a2a.TaskStateInputRequired || len(task.Artifacts) != 2 {
		t.Fatalf("%s %v", task.Status.State, task.Artifacts)
	}
	sum := sha256.Sum256([]byte("one,two"))
	sha := hex.EncodeToString(sum[:])
	if u := task.Artifacts[0].Parts[0].URL; u != "file://"+filepath.Join(dir, sha[:2], sha) || len(task.Artifacts[0].Parts) != 1 {
		t.Errorf("appended artifact = %v", task.Artifacts[0])
	}
	if len(task.Artifacts[1].Parts) != 2 {
		t.Errorf("inline artifact = %v", task.Artifacts[1])
	}
}

// TURN-7, TURN-8, A2A 1.0 §3.3: an event that breaks the turn-event
// protocol (an invalid part, id or payload, content after a message event)
// fails the turn; a blocking SendMessage answers InvalidAgentResponseError
// without the backend's output.
func TestArtifactBadEventsFailTurn(t *testing.T) {
	for name, evs := range map[string][]backend.Event{
		"relative url":       {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"url":"../secret-detail"}]`)}},
		"bad id":             {{V: 1, Type: backend.EventArtifact, ArtifactID: "../../secret-detail", Text: "x", MediaType: "text/plain"}},
		"no media type":      {{V: 1, Type: backend.EventArtifact, Base64: "AAAA", Filename: "secret-detail"}},
		"bad base64":         {{V: 1, Type: backend.EventArtifact, Base64: "!!secret-detail", MediaType: "image/png"}},
		"several members":    {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"data":1,"text":"secret-detail"}]`)}},
		"no content":         {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"mediaType":"text/plain","filename":"secret-detail"}]`)}},
		"0.3 file part":      {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"kind":"file","file":{"uri":"https://secret-detail/"}}]`)}},
		"parts not a list":   {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`{"text":"secret-detail"}`)}},
		"raw not base64":     {{V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{"raw":"secret-detail!"}]`)}},
		"empty message":      {{V: 1, Type: backend.EventMessage}},
		"message bad part":   {{V: 1, Type: backend.EventMessage, Text: "x", Parts: json.RawMessage(`[{"filename":"secret-detail"}]`)}},
		"text after message": {{V: 1, Type: backend.EventMessage, Text: "a"}, {V: 1, Type: backend.EventText, Text: "secret-detail"}},
		"after content":      {{V: 1, Type: backend.EventText, Text: "partial "}, {V: 1, Type: backend.EventArtifact, Parts: json.RawMessage(`[{}]`)}},
	} {
		t.Run(name, func(t *testing.T) {
			e, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event { return evs })
			e.sendInvalid(sendReq(msg("go")), "secret-detail")
		})
	}
}

// TURN-7: every valid A2A part a backend hands over is accepted and passed
// through as sent: text, raw (inline up to inline_artifact_bytes), url with
// filename and mediaType, data with any JSON value, parts with metadata.
func TestArtifactValidPartsPassThrough(t *testing.T) {
	parts := `[{"text":"hello","mediaType":"text/markdown","metadata":{"k":"v"}},` +
		`{"raw":"AAECAw==","mediaType":"application/octet-stream","filename":"b.bin","metadata":{"n":1}},` +
		`{"url":"https://example.com/doc.pdf","filename":"doc.pdf","mediaType":"application/pdf"},` +
		`{"url":"s3://bucket/key"},{"url":"data:text/plain;base64,aGk="},` +
		`{"data":null},{"data":[1,"two"]},{"data":"s"},{"data":3.5},{"data":false},{"data":{"k":{"deep":[]}},"mediaType":"application/json"}]`
	e, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{
			{V: 1, Type: backend.EventArtifact, ArtifactID: "all", Parts: json.RawMessage(parts)},
			{V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeCompleted, Text: "done"},
		}
	})
	task := e.send("", sendReq(msg("go")))
	if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
		t.Fatalf("%s %q %v", task.Status.State, statusText(task), task.Artifacts)
	}
	var want, got any
	_ = json.Unmarshal([]byte(parts), &want)
	b, _ := json.Marshal(task.Artifacts[0].Parts)
	_ = json.Unmarshal(b, &got)
	if mustJSON(want) != mustJSON(got) {
		t.Errorf("parts changed:\n got %s\nwant %s", b, parts)
	}
	stored := e.getTask("", task.ID)
	if b2, _ := json.Marshal(stored.Artifacts[0].Parts); string(b2) != string(b) {
		t.Errorf("stored parts %s, streamed %s", b2, b)
	}

	// A message event's parts are any valid parts too, raw included.
	e2, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventMessage, Text: "see", Parts: json.RawMessage(`[{"raw":"AAEC","filename":"x.bin"},{"data":null}]`)}}
	})
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(e2.sendRaw("", sendReq(msg("hi"))), &res); err != nil || res.Message == nil {
		t.Fatalf("direct reply: %v %v", err, res)
	}
	if p := res.Message.Parts; len(p) != 3 || string(p[1].Raw) != "\x00\x01\x02" || p[1].Filename != "x.bin" || string(p[2].Data) != "null" {
		t.Errorf("direct reply parts = %s", mustJSON(p))
	}
}

func TestMessageEventDirectReply(t *testing.T) {
	e, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventUsage, TotalTokens: 3}, {V: 1, Type: backend.EventMessage, Text: "Just this."}, {V: 1, Type: backend.EventEnd, Outcome: backend.OutcomeInputRequired}}
	})
	raw := e.sendRaw("", sendReq(msg("hi")))
	var res a2a.SendMessageResponse
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatal(err)
	}
	if res.Task != nil || res.Message == nil || messageText(*res.Message) != "Just this." || res.Message.ContextID == "" || res.Message.TaskID != "" || res.Message.Role != a2a.RoleAgent {
		t.Fatalf("reply = %s", raw)
	}
	// The task behind it is stored COMPLETED with the message.
	list := e.call("", a2a.MethodListTasks, map[string]any{"contextId": res.Message.ContextID})
	if !strings.Contains(string(list.Result), "TASK_STATE_COMPLETED") || !strings.Contains(string(list.Result), "Just this.") {
		t.Errorf("stored task: %s", list.Result)
	}

	// Content after a message event breaks the protocol (see
	// TestArtifactBadEventsFailTurn). A message event after text is an
	// ordinary chunk.
	e3, _ := artifactEnv(t, "", func(*backend.TurnRequest) []backend.Event {
		return []backend.Event{{V: 1, Type: backend.EventText, Text: "a"}, {V: 1, Type: backend.EventMessage, Text: "b"}}
	})
	task := e3.send("", sendReq(msg("hi")))
	if task.Status.State != a2a.TaskStateInputRequired || statusText(task) != "ab" {
		t.Errorf("late message event: %s %q", task.Status.State, statusText(task))
	}
}

func TestTurnErrorKinds(t *testing.T) {
	for kind, want := range map[string]a2a.TaskState{backend.ErrorKindTransient: a2a.TaskStateInputRequired, backend.ErrorKindAuth: a2a.TaskStateFailed, backend.ErrorKindInternal: a2a.TaskStateFailed} {
		e := newTestEnv(t, Config{Backend: artScript{events: func(*backend.TurnRequest) []backend.Event { return nil }, err: &backend.TurnError{Kind: kind, Err: os.ErrDeadlineExceeded}}})
		task := e.send("", sendReq(msg("x")))
		if task.Status.State != want {
			t.Errorf("%s: %s", kind, task.Status.State)
		}
	}
	_ = time.Second
}
