package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// onEvent maps one backend event onto the task (TURN-6).
func (s *Service) onEvent(ctx context.Context, r *run, ts *turnState, ev Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ts.end != nil {
		return nil // events after end are ignored
	}
	ns := s.cfg.Namespace
	switch ev.Type {
	case EventMessage:
		if !ts.content {
			return s.onMessage(ts, ev)
		}
		fallthrough // not the first content event: an ordinary text chunk
	case EventText:
		if ts.direct != nil {
			return errContentAfterMessage
		}
		ts.content = true
		if ev.Text == "" {
			return nil
		}
		ts.text.WriteString(ev.Text)
		id, ctxID := r.ids()
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking, Message: agentMessage(ctxID, id, ev.Text)}, nil)
	case EventTool:
		if ts.direct != nil {
			return errContentAfterMessage
		}
		ts.content = true
		if !s.cfg.ToolTrace {
			return nil
		}
		tool := map[string]any{"status": ev.Status}
		setIf(tool, "toolUseId", ev.ToolUseID)
		setIf(tool, "name", ev.Name)
		setIf(tool, "input", truncJSON(ev.Input))
		setIf(tool, "delta", truncate(ev.Delta))
		setIf(tool, "result", truncJSON(ev.Result))
		if ev.Error != nil && ev.Status == "failed" {
			tool["error"] = "Tool failed."
		}
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"tool": tool}})
	case EventPermission:
		perm := map[string]any{}
		setIf(perm, "toolUseId", ev.ToolUseID)
		setIf(perm, "toolName", ev.ToolName)
		if ev.AutoApproved != nil {
			perm["autoApproved"] = *ev.AutoApproved
		}
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"permission": perm}})
	case EventThinking:
		if !s.cfg.RawThinking || ev.Text == "" {
			return nil
		}
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"thinking": map[string]any{"type": "raw_thinking", "text": truncate(ev.Text)}}})
	case EventUsage:
		e := ev
		ts.usage = &e
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"usage": map[string]any{
			"inputTokens": ev.InputTokens, "outputTokens": ev.OutputTokens, "totalTokens": ev.TotalTokens}}})
	case EventArtifact:
		if ts.direct != nil {
			return errContentAfterMessage
		}
		ts.content = true
		return s.onArtifact(r, ts, ev)
	case EventEnd:
		e := ev
		ts.end = &e
	default:
		if ce := s.cfg.Logger.Check(zap.DebugLevel, "ignoring unknown turn event"); ce != nil {
			ce.Write(zap.String("type", ev.Type))
		}
	}
	return nil
}

// onArtifact records an artifact event (TURN-7): inline parts pass through
// after validation; a payload is stored and recorded as a url part.
func (s *Service) onArtifact(r *run, ts *turnState, ev Event) error {
	id := ev.ArtifactID
	if id == "" {
		ts.artifacts++
		id = fmt.Sprintf("artifact-%d", ts.artifacts)
	}
	if !artifactIDRe.MatchString(id) {
		return errors.New("artifact id must be 1-128 characters of letters, digits, '.', '_' or '-'")
	}
	var parts []a2a.Part
	var md map[string]any
	appendParts := ev.Append
	switch {
	case len(ev.Parts) > 0:
		if err := json.Unmarshal(ev.Parts, &parts); err != nil {
			return fmt.Errorf("artifact parts: %w", err)
		}
		for _, p := range parts {
			if err := validateArtifactPart(p); err != nil {
				return err
			}
		}
	case ev.Base64 != "" || ev.MediaType != "" || ev.Filename != "":
		p, m, err := s.storePayload(r, ts, id, ev)
		if err != nil {
			return err
		}
		parts, md = []a2a.Part{p}, m
		appendParts = false // the stored payload replaces the artifact's url part
	case ev.Text != "":
		parts = []a2a.Part{a2a.TextPart(ev.Text)}
	}
	if len(parts) == 0 {
		return nil
	}
	art := a2a.Artifact{ArtifactID: id, Name: ev.Name, Parts: parts, Metadata: md}
	taskID, ctxID := r.ids()
	upd := &a2a.TaskArtifactUpdateEvent{TaskID: taskID, ContextID: ctxID, Artifact: art, Append: appendParts, LastChunk: ev.LastChunk}
	r.publish(a2a.StreamResponse{ArtifactUpdate: upd}, func(t *a2a.Task) {
		for i := range t.Artifacts {
			if t.Artifacts[i].ArtifactID == id {
				if appendParts {
					t.Artifacts[i].Parts = append(t.Artifacts[i].Parts, parts...)
				} else {
					if art.Name == "" {
						art.Name = t.Artifacts[i].Name
					}
					t.Artifacts[i] = art
				}
				return
			}
		}
		t.Artifacts = append(t.Artifacts, art)
	})
	return nil
}

// validateArtifactPart accepts the inline parts a backend may hand over:
// text, data (valid JSON) and url parts (absolute http(s) or file URLs).
func validateArtifactPart(p a2a.Part) error {
	switch p.Kind() {
	case "text":
		return nil
	case "data":
		if !json.Valid(p.Data) {
			return errors.New("artifact data part is not valid JSON")
		}
		return nil
	case "url":
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") || (u.Scheme != "file" && u.Host == "") {
			return errors.New("artifact url part must be an absolute http(s) or file URL")
		}
		return nil
	case "raw":
		return errors.New("artifact raw parts are not passed inline; send a base64 payload")
	}
	return errors.New("artifact part holds no content or several")
}

// errContentAfterMessage fails a turn whose backend sent content after a
// message event (Appendix A: only end may follow it).
var errContentAfterMessage = errors.New("turn-event protocol: content event after a message event")

// onMessage records a message event that is the turn's first content
// event: the reply becomes a direct A2A Message (Appendix A).
func (s *Service) onMessage(ts *turnState, ev Event) error {
	var parts []a2a.Part
	if ev.Text != "" {
		parts = append(parts, a2a.TextPart(ev.Text))
	}
	if len(ev.Parts) > 0 {
		var extra []a2a.Part
		if err := json.Unmarshal(ev.Parts, &extra); err != nil {
			return fmt.Errorf("message parts: %w", err)
		}
		for _, p := range extra {
			if err := validateArtifactPart(p); err != nil {
				return err
			}
		}
		parts = append(parts, extra...)
	}
	if len(parts) == 0 {
		return errors.New("message event without text or parts")
	}
	ts.content = true
	ts.text.WriteString(ev.Text)
	ts.direct = &a2a.Message{Role: a2a.RoleAgent, Parts: parts}
	return nil
}

// directFor returns the stored form of a message event's reply when the
// turn ends completed: the task's final status message, marked with
// metadata.<ns>.directMessage = true so SendMessage answers with it.
func (ts *turnState) directFor(state a2a.TaskState, ns, ctxID, taskID string) *a2a.Message {
	if ts == nil || ts.direct == nil || state != a2a.TaskStateCompleted {
		return nil
	}
	m := *ts.direct
	m.MessageID = newID()
	m.ContextID, m.TaskID = ctxID, taskID
	m.Metadata = map[string]any{ns: map[string]any{"directMessage": true}}
	return &m
}

// DirectReply returns the direct Message a blocking SendMessage answers
// with when the backend replied with a message event (Appendix A): the
// final status message of a COMPLETED task marked directMessage, without
// its task id. It returns nil for an ordinary task.
func DirectReply(t *a2a.Task, ns string) *a2a.Message {
	if t == nil || t.Status.State != a2a.TaskStateCompleted || t.Status.Message == nil {
		return nil
	}
	md, _ := t.Status.Message.Metadata[ns].(map[string]any)
	if d, _ := md["directMessage"].(bool); !d {
		return nil
	}
	m := *t.Status.Message
	m.TaskID = ""
	return &m
}

// TurnError is an error a backend returns to say how its turn failed
// (TURN-8): Kind is ErrorKindTransient, ErrorKindAuth or ErrorKindInternal.
// Err is logged, never shown to the client.
type TurnError struct {
	Kind string
	Err  error
}

func (e *TurnError) Error() string {
	if e.Err == nil {
		return e.Kind + " turn failure"
	}
	return e.Kind + ": " + e.Err.Error()
}

func (e *TurnError) Unwrap() error { return e.Err }

// outcome turns the end of a turn into its final state and status text (TURN-8).
func (s *Service) outcome(ctx context.Context, ts *turnState, runErr error, corr string) (a2a.TaskState, string) {
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, errShutdown) {
			return a2a.TaskStateFailed, InterruptedMessage
		}
		return a2a.TaskStateCanceled, msgCanceled
	}
	answer := ts.text.String()
	if ts.direct != nil && runErr == nil && (ts.end == nil || ts.end.Outcome == OutcomeInputRequired || ts.end.Outcome == OutcomeCompleted || ts.end.Outcome == "") {
		return a2a.TaskStateCompleted, answer
	}
	if e := ts.end; e != nil {
		if e.Text != "" {
			answer = e.Text
		}
		switch e.Outcome {
		case OutcomeCompleted:
			return a2a.TaskStateCompleted, answer
		case OutcomeRejected:
			if answer == "" {
				answer = msgRejected
			}
			return a2a.TaskStateRejected, answer
		case OutcomeCanceled:
			return a2a.TaskStateCanceled, msgCanceled
		case OutcomeFailed:
			return s.failure(e.Error, corr)
		default:
			return a2a.TaskStateInputRequired, answer
		}
	}
	if runErr != nil {
		var te *TurnError
		if errors.As(runErr, &te) {
			return s.failure(&EventError{Kind: te.Kind, Message: runErr.Error()}, corr)
		}
		return s.failure(&EventError{Kind: ErrorKindInternal, Message: runErr.Error()}, corr)
	}
	return a2a.TaskStateInputRequired, answer
}

func (s *Service) failure(e *EventError, corr string) (a2a.TaskState, string) {
	kind, detail := ErrorKindInternal, ""
	if e != nil {
		kind, detail = e.Kind, e.Message
	}
	s.cfg.Logger.Warn("turn failed", zap.String("kind", kind), zap.String("detail", truncate(detail)), zap.String("correlation_id", corr))
	switch kind {
	case ErrorKindTransient:
		return a2a.TaskStateInputRequired, msgTransient
	case ErrorKindAuth:
		return a2a.TaskStateFailed, msgAuthRequired
	}
	return a2a.TaskStateFailed, internalMessage(corr)
}

func internalMessage(corr string) string {
	return "The agent failed with an internal error (correlation id " + corr + ")."
}
