package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// onEvent maps one backend event onto the task (TURN-6).
func (s *Service) onEvent(ctx context.Context, r *run, ts *turnState, ev backend.Event) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if ts.end != nil {
		return nil // events after end are ignored
	}
	ns := s.cfg.Namespace
	switch ev.Type {
	case backend.EventMessage:
		if !ts.content {
			return s.onMessage(ts, ev)
		}
		fallthrough // not the first content event: an ordinary text chunk
	case backend.EventText:
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
	case backend.EventTool:
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
	case backend.EventPermission:
		perm := map[string]any{}
		setIf(perm, "toolUseId", ev.ToolUseID)
		setIf(perm, "toolName", ev.ToolName)
		if ev.AutoApproved != nil {
			perm["autoApproved"] = *ev.AutoApproved
		}
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"permission": perm}})
	case backend.EventThinking:
		if !s.cfg.RawThinking || ev.Text == "" {
			return nil
		}
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"thinking": map[string]any{"type": "raw_thinking", "text": truncate(ev.Text)}}})
	case backend.EventUsage:
		e := ev
		ts.usage = &e
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, map[string]any{ns: map[string]any{"usage": map[string]any{
			"inputTokens": ev.InputTokens, "outputTokens": ev.OutputTokens, "totalTokens": ev.TotalTokens}}})
	case backend.EventArtifact:
		if ts.direct != nil {
			return errContentAfterMessage
		}
		ts.content = true
		return s.onArtifact(r, ts, ev)
	case backend.EventEnd:
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
// after validation (raw parts over InlineArtifactBytes are stored and become
// url parts); a payload is stored and recorded as a url part. A part that is
// not a valid A2A part, or an invalid id or payload, is a backend.ProtocolError.
func (s *Service) onArtifact(r *run, ts *turnState, ev backend.Event) error {
	id := ev.ArtifactID
	if id == "" {
		ts.artifacts++
		id = fmt.Sprintf("artifact-%d", ts.artifacts)
	}
	if !artifactIDRe.MatchString(id) {
		return protocolErrorf("artifact id must be 1-128 characters of letters, digits, '.', '_' or '-'")
	}
	var parts []a2a.Part
	var md map[string]any
	appendParts := ev.Append
	switch {
	case len(ev.Parts) > 0:
		var err error
		if parts, err = s.backendParts(ev.Parts, "artifact"); err != nil {
			return err
		}
		if parts, md, err = s.storeRawParts(r, ts, id, parts, appendParts); err != nil {
			return err
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

// backendParts decodes the parts of an artifact or message event and
// checks each is a valid A2A part. The gateway's own namespace in a part's
// metadata (where it records stored parts) is dropped: only the gateway
// writes it.
func (s *Service) backendParts(raw json.RawMessage, what string) ([]a2a.Part, error) {
	var parts []a2a.Part
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, protocolErrorf("%s parts are not a list of A2A parts: %v", what, err)
	}
	for i := range parts {
		if err := validatePart(parts[i]); err != nil {
			return nil, protocolErrorf("%s part %d: %v", what, i, err)
		}
		if _, ok := parts[i].Metadata[s.cfg.Namespace]; ok {
			delete(parts[i].Metadata, s.cfg.Namespace)
			if len(parts[i].Metadata) == 0 {
				parts[i].Metadata = nil
			}
		}
	}
	return parts, nil
}

// validatePart accepts every valid A2A part (a2a-v1 Part): exactly one of
// text, raw, url (an absolute URL) or data (any JSON value), with optional
// mediaType, filename and metadata.
func validatePart(p a2a.Part) error {
	switch p.Kind() {
	case "text", "raw":
		return nil
	case "data":
		if !json.Valid(p.Data) {
			return errors.New("data is not valid JSON")
		}
		return nil
	case "url":
		u, err := url.Parse(p.URL)
		if err != nil || !u.IsAbs() || ((u.Scheme == "http" || u.Scheme == "https") && u.Host == "") {
			return errors.New("url must be an absolute URL")
		}
		return nil
	}
	return errors.New("a part holds exactly one of text, raw, url or data")
}

// errContentAfterMessage fails a turn whose backend sent content after a
// message event (Appendix A: only end may follow it).
var errContentAfterMessage = protocolErrorf("content event after a message event")

// onMessage records a message event that is the turn's first content
// event: the reply becomes a direct A2A Message (Appendix A). Its parts are
// any valid A2A parts, passed inline.
func (s *Service) onMessage(ts *turnState, ev backend.Event) error {
	var parts []a2a.Part
	if ev.Text != "" {
		parts = append(parts, a2a.TextPart(ev.Text))
	}
	if len(ev.Parts) > 0 {
		extra, err := s.backendParts(ev.Parts, "message")
		if err != nil {
			return err
		}
		parts = append(parts, extra...)
	}
	if len(parts) == 0 {
		return protocolErrorf("message event without text or parts")
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

// outcome turns the end of a turn into its final state and status text (TURN-8).
func (s *Service) outcome(ctx context.Context, ts *turnState, runErr error, corr string) (a2a.TaskState, string) {
	if cause := context.Cause(ctx); cause != nil {
		if errors.Is(cause, errShutdown) {
			return a2a.TaskStateFailed, InterruptedMessage
		}
		return a2a.TaskStateCanceled, msgCanceled
	}
	answer := ts.text.String()
	if ts.direct != nil && runErr == nil && (ts.end == nil || ts.end.Outcome == backend.OutcomeInputRequired || ts.end.Outcome == backend.OutcomeCompleted || ts.end.Outcome == "") {
		return a2a.TaskStateCompleted, answer
	}
	if e := ts.end; e != nil {
		if e.Text != "" {
			answer = e.Text
		}
		switch e.Outcome {
		case backend.OutcomeCompleted:
			return a2a.TaskStateCompleted, answer
		case backend.OutcomeRejected:
			if answer == "" {
				answer = msgRejected
			}
			return a2a.TaskStateRejected, answer
		case backend.OutcomeCanceled:
			return a2a.TaskStateCanceled, msgCanceled
		case backend.OutcomeFailed:
			return s.failure(e.Error, corr)
		default:
			return a2a.TaskStateInputRequired, answer
		}
	}
	if runErr != nil {
		var pe *backend.ProtocolError
		if errors.As(runErr, &pe) {
			// Output the gateway cannot use (Appendix A): FAILED, and a
			// blocking SendMessage answers InvalidAgentResponseError.
			s.cfg.Logger.Warn("turn failed: invalid backend output", zap.String("detail", truncate(runErr.Error())), zap.String("correlation_id", corr))
			ts.invalid = corr
			return a2a.TaskStateFailed, invalidResponseMessage(corr)
		}
		var te *backend.TurnError
		if errors.As(runErr, &te) {
			return s.failure(&backend.EventError{Kind: te.Kind, Message: runErr.Error()}, corr)
		}
		return s.failure(&backend.EventError{Kind: backend.ErrorKindInternal, Message: runErr.Error()}, corr)
	}
	return a2a.TaskStateInputRequired, answer
}

func (s *Service) failure(e *backend.EventError, corr string) (a2a.TaskState, string) {
	kind, detail := backend.ErrorKindInternal, ""
	if e != nil {
		kind, detail = e.Kind, e.Message
	}
	s.cfg.Logger.Warn("turn failed", zap.String("kind", kind), zap.String("detail", truncate(detail)), zap.String("correlation_id", corr))
	switch kind {
	case backend.ErrorKindTransient:
		return a2a.TaskStateInputRequired, msgTransient
	case backend.ErrorKindAuth:
		return a2a.TaskStateFailed, msgAuthRequired
	}
	return a2a.TaskStateFailed, internalMessage(corr)
}

func internalMessage(corr string) string {
	return "The agent failed with an internal error (correlation id " + corr + ")."
}

// invalidResponseMessage is the status text of a turn whose backend output
// broke the turn-event protocol, and the message of the
// InvalidAgentResponseError a blocking SendMessage answers with.
func invalidResponseMessage(corr string) string {
	return "The agent returned an invalid response (correlation id " + corr + ")."
}

// errInvalidResponse is the InvalidAgentResponseError (-32006) of a
// blocking SendMessage whose turn failed on invalid backend output
// (A2A 1.0 §3.3): sanitised, with the task id so the caller can still read
// the FAILED task.
func errInvalidResponse(taskID, corr string) *a2a.Error {
	return &a2a.Error{Code: a2a.CodeInvalidAgentResponse, Message: invalidResponseMessage(corr),
		Metadata: map[string]string{"taskId": taskID, "correlationId": corr}}
}

// protocolErrorf returns a backend.ProtocolError with a formatted description.
func protocolErrorf(format string, args ...any) error {
	return &backend.ProtocolError{Err: fmt.Errorf(format, args...)}
}
