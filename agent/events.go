package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

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
	case EventText, EventMessage:
		if ev.Text == "" {
			return nil
		}
		ts.text.WriteString(ev.Text)
		snap := r.snapshot()
		s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking, Message: agentMessage(snap.ContextID, snap.ID, ev.Text)}, nil)
	case EventTool:
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

// onArtifact passes inline artifact parts through as an artifact update and
// records the artifact on the task (TURN-7).
func (s *Service) onArtifact(r *run, ts *turnState, ev Event) error {
	var parts []a2a.Part
	if len(ev.Parts) > 0 {
		if err := json.Unmarshal(ev.Parts, &parts); err != nil {
			return fmt.Errorf("artifact parts: %w", err)
		}
	} else if ev.Text != "" {
		parts = []a2a.Part{{Text: &ev.Text, MediaType: ev.MediaType, Filename: ev.Filename}}
	}
	if len(parts) == 0 {
		return nil
	}
	for _, p := range parts {
		if p.Kind() == "" {
			return errors.New("artifact part holds no content or several")
		}
	}
	id := ev.ArtifactID
	if id == "" {
		ts.artifacts++
		id = fmt.Sprintf("artifact-%d", ts.artifacts)
	}
	art := a2a.Artifact{ArtifactID: id, Name: ev.Name, Parts: parts}
	snap := r.snapshot()
	upd := &a2a.TaskArtifactUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Artifact: art, Append: ev.Append, LastChunk: ev.LastChunk}
	r.publish(a2a.StreamResponse{ArtifactUpdate: upd}, func(t *a2a.Task) {
		for i := range t.Artifacts {
			if t.Artifacts[i].ArtifactID == id {
				if ev.Append {
					t.Artifacts[i].Parts = append(t.Artifacts[i].Parts, parts...)
				} else {
					t.Artifacts[i] = art
				}
				return
			}
		}
		t.Artifacts = append(t.Artifacts, art)
	})
	return nil
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
