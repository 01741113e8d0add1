package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// Client-facing status messages (TURN-8, RPC-6, INPUT-1, INPUT-3).
const (
	msgAlreadyWorking   = "Task is already working."
	msgTextOnly         = "A2A server currently accepts text input only."
	msgInvalidWorkspace = "Invalid workspace: the cwd must be an absolute, existing directory inside an allowed root."
	msgOtherWorkspace   = "Invalid workspace: this context is bound to a different workspace."
	msgTransient        = "A temporary error occurred. Please retry."
	msgAuthRequired     = "Authentication required. Configure credentials and retry."
	msgBusy             = "The server is running its maximum number of concurrent turns. Please retry later."
	msgCanceled         = "Task canceled."
	msgRejected         = "The agent rejected the task."
)

// maxTraceField bounds tool input/result and thinking text in metadata (TURN-6).
const maxTraceField = 4000

// start validates a message, creates (or continues) its task, stores it
// SUBMITTED, subscribes the caller and launches the turn.
func (s *Service) start(ctx context.Context, owner string, req *a2a.SendMessageRequest) (*run, a2a.Task, *subscriber, error) {
	var zero a2a.Task
	if req == nil || req.Message == nil {
		return nil, zero, nil, a2a.ErrInvalidParams("message", "is required")
	}
	if err := validateMessage(req.Message); err != nil {
		return nil, zero, nil, err
	}
	if req.Configuration != nil && !acceptsOutput(req.Configuration.AcceptedOutputModes, s.cfg.OutputModes) {
		return nil, zero, nil, &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "None of the accepted output modes can be produced; this agent produces " + strings.Join(s.cfg.OutputModes, ", ")}
	}
	if req.Configuration != nil && req.Configuration.TaskPushNotificationConfig != nil {
		return nil, zero, nil, ErrPushNotSupported()
	}
	prompt, err := buildPrompt(req.Message)
	if err != nil {
		return nil, zero, nil, err
	}
	msg := stripSensitive(req.Message, s.cfg.Namespace, s.cfg.SensitiveMetadataKeys)
	if msg == req.Message {
		c := *msg
		msg = &c
	}

	now := a2a.Timestamp(time.Now())
	var task a2a.Task
	if msg.TaskID != "" {
		t, err := s.continuable(ctx, owner, msg)
		if err != nil {
			return nil, zero, nil, err
		}
		task = *t
		msg.ContextID = task.ContextID
		task.History = append(task.History, *msg)
	} else {
		ctxID := msg.ContextID
		if ctxID == "" {
			ctxID = newID()
		}
		msg.ContextID = ctxID
		msg.TaskID = newID()
		task = a2a.Task{ID: msg.TaskID, ContextID: ctxID, History: []a2a.Message{*msg}}
	}
	task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: now}

	runCtx, cancel := context.WithCancelCause(context.Background())
	r := newRun(owner, &task, cancel)
	if _, loaded := s.hub.runs.LoadOrStore(task.ID, r); loaded {
		cancel(nil)
		return nil, zero, nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msgAlreadyWorking}
	}
	if err := s.hub.store.PutTask(ctx, owner, &task); err != nil {
		s.hub.runs.Delete(task.ID)
		cancel(nil)
		s.cfg.Logger.Error("storing submitted task", errField(err))
		return nil, zero, nil, a2a.ErrInternal()
	}
	first, sub := r.subscribe()
	go s.execute(runCtx, r, msg, prompt)
	return r, first, sub, nil
}

// continuable loads the task a follow-up message names and checks it may
// take another turn (RPC-1b).
func (s *Service) continuable(ctx context.Context, owner string, msg *a2a.Message) (*a2a.Task, error) {
	if v, ok := s.hub.runs.Load(msg.TaskID); ok {
		r := v.(*run)
		if r.owner != owner {
			return nil, a2a.ErrTaskNotFound(msg.TaskID)
		}
		t := time.NewTimer(s.cfg.ContextWait)
		defer t.Stop()
		select {
		case <-r.done:
		case <-t.C:
			return nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msgAlreadyWorking, Metadata: map[string]string{"taskId": msg.TaskID}}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t, err := s.hub.store.GetTask(ctx, owner, msg.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(msg.TaskID)
	}
	if err != nil {
		s.cfg.Logger.Error("reading task", errField(err))
		return nil, a2a.ErrInternal()
	}
	if t.Status.State.Terminal() {
		return nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: "Task is " + stateWord(t.Status.State) + " and accepts no more messages; send a new message in the same context instead", Metadata: map[string]string{"taskId": t.ID}}
	}
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return nil, a2a.ErrInvalidParams("message.contextId", "does not match the context of the task")
	}
	return t, nil
}

// turnState accumulates what a running turn has produced.
type turnState struct {
	text      strings.Builder
	end       *Event
	usage     *Event
	artifacts int
}

// execute runs one turn of r to its final state.
func (s *Service) execute(ctx context.Context, r *run, msg *a2a.Message, prompt string) {
	started := time.Now()
	corr := newID()[:8]
	ts := &turnState{}
	state, text := a2a.TaskStateFailed, ""
	defer func() {
		if v := recover(); v != nil {
			s.cfg.Logger.Error("turn panicked", zap.Any("panic", v), zap.String("correlation_id", corr))
			state, text = a2a.TaskStateFailed, internalMessage(corr)
		}
		final := s.finalize(r, state, text, ts)
		s.logTurn(r, final, started, corr, ts)
	}()

	ns := s.cfg.Namespace
	rawCwd, _ := metadataString(msg.Metadata, ns, "cwd")
	cwd, err := s.cfg.Workspace.Resolve(rawCwd)
	if err != nil {
		text = msgInvalidWorkspace
		return
	}
	if !hasInput(prompt) {
		text = msgTextOnly
		return
	}
	if !acquireSlot(ctx, s.slots, s.cfg.ContextWait) {
		text = msgBusy
		return
	}
	defer func() { <-s.slots }()

	c, ok := s.contextFor(ctx, r.owner, msg.ContextID, cwd)
	if !ok {
		text = msgOtherWorkspace
		return
	}
	if !c.acquire(ctx, s.cfg.ContextWait) {
		if errors.Is(context.Cause(ctx), errCanceledByClient) {
			state, text = a2a.TaskStateCanceled, msgCanceled
			return
		}
		text = msgAlreadyWorking
		return
	}
	defer c.release()

	snap := s.publishStatus(r, a2a.TaskStatus{State: a2a.TaskStateWorking}, nil)
	if ctx.Err() != nil {
		return // canceled meanwhile; the deferred finalize says so
	}
	if err := s.hub.store.PutTask(context.WithoutCancel(ctx), r.owner, &snap); err != nil {
		s.cfg.Logger.Error("storing working task", errField(err), zap.String("correlation_id", corr))
	}

	treq := &TurnRequest{V: EventVersion, Type: "turn", ContextID: snap.ContextID, TaskID: snap.ID, MessageID: msg.MessageID,
		Cwd: cwd, Prompt: prompt, Message: msg, Metadata: nsMetadata(msg.Metadata, ns), Session: &c.session}
	runErr := s.cfg.Backend.RunTurn(ctx, treq, func(ev Event) error { return s.onEvent(ctx, r, ts, ev) })
	state, text = s.outcome(ctx, ts, runErr, corr)
}

// contextFor returns the live context, reviving it from the store (or
// creating it) when it is not in memory. ok is false when the context is
// bound to a different workspace. Concurrent first messages of a context
// agree on one binding: the creator reads or writes the store while the
// others wait for it.
func (s *Service) contextFor(ctx context.Context, owner, id, cwd string) (*convContext, bool) {
	key := ctxKey{owner: owner, id: id}
	c, created := s.hub.contexts.get(key, func() *convContext {
		return &convContext{backend: s.cfg.Backend, ready: make(chan struct{})}
	})
	if !created {
		<-c.ready
		return c, c.cwd == cwd
	}
	bound := cwd
	rec, err := s.hub.store.GetContext(ctx, owner, id)
	switch {
	case err == nil:
		bound = rec.Cwd
	case errors.Is(err, store.ErrNotFound):
		now := time.Now()
		if err := s.hub.store.PutContext(context.WithoutCancel(ctx), store.ContextRecord{Owner: owner, ID: id, Cwd: cwd, CreatedAt: now, UpdatedAt: now}); err != nil {
			s.cfg.Logger.Error("storing context", errField(err))
		}
	default:
		s.cfg.Logger.Error("reading context", errField(err))
	}
	c.cwd = bound
	close(c.ready)
	return c, c.cwd == cwd
}

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

// finalize stores and publishes the final state of a turn, then ends the
// run. A requested cancel always wins over what the backend said.
func (s *Service) finalize(r *run, state a2a.TaskState, text string, ts *turnState) a2a.Task {
	r.mu.Lock()
	if r.finalized {
		r.mu.Unlock()
		return r.snapshot()
	}
	r.finalized = true
	if r.canceling {
		state, text = a2a.TaskStateCanceled, msgCanceled
	}
	r.mu.Unlock()
	snap := r.snapshot()
	answer := state == a2a.TaskStateInputRequired || state == a2a.TaskStateCompleted
	var msg *a2a.Message
	if text != "" {
		msg = agentMessage(snap.ContextID, snap.ID, text)
	}
	if answer && msg != nil {
		st := a2a.TaskStatus{State: a2a.TaskStateWorking, Message: msg, Timestamp: a2a.Timestamp(time.Now())}
		md := map[string]any{s.cfg.Namespace: map[string]any{"assistantFinal": map[string]any{"complete": true}}}
		r.publishFinal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: st, Metadata: md}},
			func(t *a2a.Task) { t.Status = st })
	}
	status := a2a.TaskStatus{State: state, Message: msg, Timestamp: a2a.Timestamp(time.Now())}
	var final a2a.Task
	r.publishFinal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: status}}, func(t *a2a.Task) {
		t.Status = status
		if answer && msg != nil {
			t.History = append(t.History, *msg)
		}
		final = cloneTask(t)
	})
	if err := s.hub.store.PutTask(context.Background(), r.owner, &final); err != nil {
		s.cfg.Logger.Error("storing final task state", errField(err))
	}
	s.hub.runs.Delete(snap.ID)
	r.finish()
	return final
}

// publishStatus sets the live status and publishes a status update; a zero
// timestamp is filled in. It returns the task after the change.
func (s *Service) publishStatus(r *run, st a2a.TaskStatus, md map[string]any) a2a.Task {
	if st.Timestamp == "" {
		st.Timestamp = a2a.Timestamp(time.Now())
	}
	var out a2a.Task
	r.mu.Lock()
	id, ctxID := r.task.ID, r.task.ContextID
	r.mu.Unlock()
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: st, Metadata: md}}
	r.publish(ev, func(t *a2a.Task) {
		t.Status = st
		out = cloneTask(t)
	})
	return out
}

func (s *Service) logTurn(r *run, t a2a.Task, started time.Time, corr string, ts *turnState) {
	ce := s.cfg.Logger.Check(zap.InfoLevel, "turn")
	if ce == nil {
		return
	}
	fields := []zap.Field{
		zap.String("task_id", t.ID), zap.String("context_id", t.ContextID), zap.String("principal", r.owner),
		zap.Duration("duration", time.Since(started)), zap.String("outcome", string(t.Status.State)),
		zap.String("correlation_id", corr),
	}
	if ts.usage != nil {
		fields = append(fields, zap.Int64("input_tokens", ts.usage.InputTokens), zap.Int64("output_tokens", ts.usage.OutputTokens))
	}
	ce.Write(fields...)
}

func acquireSlot(ctx context.Context, slots chan struct{}, wait time.Duration) bool {
	select {
	case slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case slots <- struct{}{}:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

func hasInput(prompt string) bool { return strings.TrimSpace(prompt) != "" }

// nsMetadata returns metadata.<ns> as an object, or nil.
func nsMetadata(md map[string]any, ns string) map[string]any {
	inner, _ := md[ns].(map[string]any)
	return inner
}

func setIf(m map[string]any, k string, v any) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return
		}
	case nil:
		return
	}
	m[k] = v
}

// truncate cuts s to maxTraceField characters (runes).
func truncate(s string) string {
	if utf8.RuneCountInString(s) <= maxTraceField {
		return s
	}
	return string([]rune(s)[:maxTraceField])
}

// truncJSON renders a JSON value for metadata: strings and small values as
// they are, anything longer than the limit as truncated text.
func truncJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return truncate(string(raw))
	}
	if str, ok := v.(string); ok {
		return truncate(str)
	}
	if utf8.RuneCount(raw) > maxTraceField {
		return truncate(string(raw))
	}
	return v
}

func errField(err error) zap.Field { return zap.Error(err) }
