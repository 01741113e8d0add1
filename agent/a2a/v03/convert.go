package v03

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// states maps 1.0 task states to their 0.3 names.
var states = map[a2a.TaskState]string{
	a2a.TaskStateUnspecified:   "unknown",
	a2a.TaskStateSubmitted:     "submitted",
	a2a.TaskStateWorking:       "working",
	a2a.TaskStateCompleted:     "completed",
	a2a.TaskStateFailed:        "failed",
	a2a.TaskStateCanceled:      "canceled",
	a2a.TaskStateInputRequired: "input-required",
	a2a.TaskStateRejected:      "rejected",
	a2a.TaskStateAuthRequired:  "auth-required",
}

// State03 is the 0.3 name of a 1.0 state ("unknown" for anything else).
func State03(s a2a.TaskState) string {
	if v, ok := states[s]; ok {
		return v
	}
	return "unknown"
}

// State10 is the 1.0 state of a 0.3 name (UNSPECIFIED when unknown).
func State10(s string) a2a.TaskState {
	for k, v := range states {
		if v == s {
			return k
		}
	}
	return a2a.TaskStateUnspecified
}

// Role03 is the 0.3 role of a 1.0 role.
func Role03(r a2a.Role) string {
	if r == a2a.RoleAgent {
		return "agent"
	}
	return "user"
}

// Role10 is the 1.0 role of a 0.3 role ("" and unknown roles: UNSPECIFIED).
func Role10(r string) a2a.Role {
	switch r {
	case "user":
		return a2a.RoleUser
	case "agent":
		return a2a.RoleAgent
	}
	return a2a.RoleUnspecified
}

// Part03 renders a 1.0 part in its 0.3 shape: text, file (raw → bytes,
// url → uri, mediaType → mimeType, filename → name) or data.
func Part03(p a2a.Part) Part {
	out := Part{Metadata: p.Metadata}
	switch {
	case p.Text != nil:
		out.Kind, out.Text = KindText, p.Text
	case p.Raw != nil:
		out.Kind = KindFile
		out.File = &File{Name: p.Filename, MimeType: p.MediaType, Bytes: base64.StdEncoding.EncodeToString(p.Raw)}
	case p.URL != "":
		out.Kind = KindFile
		out.File = &File{Name: p.Filename, MimeType: p.MediaType, URI: p.URL}
	default:
		out.Kind, out.Data = KindData, p.Data
	}
	return out
}

// Part10 reads a 0.3 part as a 1.0 part; a part without a known kind or
// with bad base64 is an error naming the part.
func Part10(p Part) (a2a.Part, error) {
	out := a2a.Part{Metadata: p.Metadata}
	switch p.Kind {
	case KindText:
		if p.Text == nil {
			return out, fmt.Errorf("a text part needs text")
		}
		out.Text = p.Text
	case KindFile:
		if p.File == nil {
			return out, fmt.Errorf("a file part needs file")
		}
		out.Filename, out.MediaType = p.File.Name, p.File.MimeType
		switch {
		case p.File.Bytes != "" && p.File.URI != "":
			return out, fmt.Errorf("a file has bytes or uri, not both")
		case p.File.Bytes != "":
			b, err := base64.StdEncoding.DecodeString(p.File.Bytes)
			if err != nil {
				return out, fmt.Errorf("file.bytes is not base64")
			}
			out.Raw = b
		case p.File.URI != "":
			out.URL = p.File.URI
		default:
			return out, fmt.Errorf("a file needs bytes or uri")
		}
	case KindData:
		if len(p.Data) == 0 {
			return out, fmt.Errorf("a data part needs data")
		}
		out.Data = p.Data
	default:
		return out, fmt.Errorf("unknown part kind %q", truncate(p.Kind))
	}
	return out, nil
}

// Parts03 renders 1.0 parts in 0.3 shape (never nil).
func Parts03(ps []a2a.Part) []Part {
	out := make([]Part, 0, len(ps))
	for _, p := range ps {
		out = append(out, Part03(p))
	}
	return out
}

// Parts10 reads 0.3 parts; errors name the part's index under field.
func Parts10(ps []Part, field string) ([]a2a.Part, error) {
	out := make([]a2a.Part, 0, len(ps))
	for i, p := range ps {
		q, err := Part10(p)
		if err != nil {
			return nil, fieldError{field: fmt.Sprintf("%s[%d]", field, i), msg: err.Error()}
		}
		out = append(out, q)
	}
	return out, nil
}

// Message03 renders a 1.0 message in 0.3 shape (nil stays nil).
func Message03(m *a2a.Message) *Message {
	if m == nil {
		return nil
	}
	return &Message{
		Kind: KindMessage, MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: Role03(m.Role), Parts: Parts03(m.Parts), Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}
}

// Message10 reads a 0.3 message (nil stays nil); field names it in errors.
func Message10(m *Message, field string) (*a2a.Message, error) {
	if m == nil {
		return nil, nil
	}
	parts, err := Parts10(m.Parts, field+".parts")
	if err != nil {
		return nil, err
	}
	return &a2a.Message{
		MessageID: m.MessageID, ContextID: m.ContextID, TaskID: m.TaskID,
		Role: Role10(m.Role), Parts: parts, Metadata: m.Metadata,
		Extensions: m.Extensions, ReferenceTaskIDs: m.ReferenceTaskIDs,
	}, nil
}

// Status03 renders a 1.0 status in 0.3 shape.
func Status03(s a2a.TaskStatus) TaskStatus {
	return TaskStatus{State: State03(s.State), Message: Message03(s.Message), Timestamp: s.Timestamp}
}

// Status10 reads a 0.3 status.
func Status10(s TaskStatus) (a2a.TaskStatus, error) {
	m, err := Message10(s.Message, "status.message")
	return a2a.TaskStatus{State: State10(s.State), Message: m, Timestamp: s.Timestamp}, err
}

// Artifact03 renders a 1.0 artifact in 0.3 shape.
func Artifact03(a a2a.Artifact) Artifact {
	return Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: Parts03(a.Parts), Metadata: a.Metadata, Extensions: a.Extensions}
}

// Artifact10 reads a 0.3 artifact.
func Artifact10(a Artifact) (a2a.Artifact, error) {
	parts, err := Parts10(a.Parts, "artifact.parts")
	return a2a.Artifact{ArtifactID: a.ArtifactID, Name: a.Name, Description: a.Description,
		Parts: parts, Metadata: a.Metadata, Extensions: a.Extensions}, err
}

// Task03 renders a 1.0 task in 0.3 shape (nil stays nil).
func Task03(t *a2a.Task) *Task {
	if t == nil {
		return nil
	}
	out := &Task{Kind: KindTask, ID: t.ID, ContextID: t.ContextID, Status: Status03(t.Status), Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		out.Artifacts = append(out.Artifacts, Artifact03(a))
	}
	for i := range t.History {
		out.History = append(out.History, *Message03(&t.History[i]))
	}
	return out
}

// Task10 reads a 0.3 task (nil stays nil).
func Task10(t *Task) (*a2a.Task, error) {
	if t == nil {
		return nil, nil
	}
	st, err := Status10(t.Status)
	if err != nil {
		return nil, err
	}
	out := &a2a.Task{ID: t.ID, ContextID: t.ContextID, Status: st, Metadata: t.Metadata}
	for _, a := range t.Artifacts {
		x, err := Artifact10(a)
		if err != nil {
			return nil, err
		}
		out.Artifacts = append(out.Artifacts, x)
	}
	for i := range t.History {
		m, err := Message10(&t.History[i], "history")
		if err != nil {
			return nil, err
		}
		out.History = append(out.History, *m)
	}
	return out, nil
}

// Event03 renders one 1.0 stream event (or SendMessage result) as the 0.3
// value a 0.3 client expects: a Task, a Message, a status-update (final
// on a terminal or interrupted state) or an artifact-update.
func Event03(ev a2a.StreamResponse) any {
	switch {
	case ev.Task != nil:
		return Task03(ev.Task)
	case ev.Message != nil:
		return Message03(ev.Message)
	case ev.StatusUpdate != nil:
		u := ev.StatusUpdate
		st := u.Status.State
		return &StatusUpdate{Kind: KindStatusUpdate, TaskID: u.TaskID, ContextID: u.ContextID,
			Status: Status03(u.Status), Final: st.Terminal() || st.Interrupted(), Metadata: u.Metadata}
	case ev.ArtifactUpdate != nil:
		u := ev.ArtifactUpdate
		return &ArtifactUpdate{Kind: KindArtifactUpdate, TaskID: u.TaskID, ContextID: u.ContextID,
			Artifact: Artifact03(u.Artifact), Append: u.Append, LastChunk: u.LastChunk, Metadata: u.Metadata}
	}
	return nil
}

// Event10 reads one 0.3 result or stream event (a Task, Message,
// status-update or artifact-update, told apart by kind) as a 1.0 stream
// event; final is the 0.3 final flag of a status-update.
func Event10(raw json.RawMessage) (ev a2a.StreamResponse, final bool, err error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return ev, false, fmt.Errorf("not a JSON object")
	}
	switch head.Kind {
	case KindTask:
		var t Task
		if err = json.Unmarshal(raw, &t); err == nil {
			ev.Task, err = Task10(&t)
		}
	case KindMessage:
		var m Message
		if err = json.Unmarshal(raw, &m); err == nil {
			ev.Message, err = Message10(&m, "message")
		}
	case KindStatusUpdate:
		var u StatusUpdate
		if err = json.Unmarshal(raw, &u); err == nil {
			var st a2a.TaskStatus
			st, err = Status10(u.Status)
			ev.StatusUpdate = &a2a.TaskStatusUpdateEvent{TaskID: u.TaskID, ContextID: u.ContextID, Status: st, Metadata: u.Metadata}
			final = u.Final
		}
	case KindArtifactUpdate:
		var u ArtifactUpdate
		if err = json.Unmarshal(raw, &u); err == nil {
			var a a2a.Artifact
			a, err = Artifact10(u.Artifact)
			ev.ArtifactUpdate = &a2a.TaskArtifactUpdateEvent{TaskID: u.TaskID, ContextID: u.ContextID, Artifact: a,
				Append: u.Append, LastChunk: u.LastChunk, Metadata: u.Metadata}
		}
	default:
		return ev, false, fmt.Errorf("unknown result kind %q", truncate(head.Kind))
	}
	return ev, final, err
}

// fieldError is a translation failure of one request field.
type fieldError struct{ field, msg string }

func (e fieldError) Error() string { return e.field + ": " + e.msg }

func truncate(s string) string {
	if len(s) > 32 {
		s = s[:32]
	}
	return strings.ToValidUTF8(s, "?")
}
