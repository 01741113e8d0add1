package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// checkTenant answers a request naming an A2A tenant (the `tenant` field,
// or the REST `/{tenant}/…` prefix). The only tenant an endpoint serves is
// its own (c.ServedTenant, an agent's name); any other is one it does not
// serve: TaskNotFoundError (HTTP 404), never the data of the site's own
// agent (TURN-10). Every operation calls it first, for both bindings.
func (c Call) checkTenant(tenant, taskID string) error {
	if tenant == "" || tenant == c.ServedTenant {
		return nil
	}
	if taskID == "" || !validID(taskID) {
		return &a2a.Error{Code: a2a.CodeTaskNotFound, Message: "Task not found"}
	}
	return a2a.ErrTaskNotFound(taskID)
}

// scopeTask resolves the tenant of an operation on one task (the call's
// tenant when the request names none) and checks it (checkTenant,
// TURN-10) and the task id in field (checkID).
func (c Call) scopeTask(tenant *string, field, id string) error {
	*tenant = c.tenant(*tenant)
	if err := c.checkTenant(*tenant, id); err != nil {
		return err
	}
	return checkID(field, id)
}

// sendScope checks the tenant of a SendMessage request (sendTenant) and
// returns the historyLength its configuration asks for.
func sendScope(call Call, req *a2a.SendMessageRequest) (*int32, error) {
	if err := sendTenant(call, req); err != nil {
		return nil, err
	}
	return historyLength(configHistory(req))
}

// sendTenant resolves and checks the tenant of a SendMessage request.
func sendTenant(call Call, req *a2a.SendMessageRequest) error {
	if req == nil {
		return call.checkTenant(call.Tenant, "")
	}
	req.Tenant = call.tenant(req.Tenant)
	taskID := ""
	if req.Message != nil {
		taskID = req.Message.TaskID
	}
	return call.checkTenant(req.Tenant, taskID)
}

// SendMessage runs a turn and returns the task once it is terminal or
// interrupted, or at once with returnImmediately (RPC-1b).
func (s *Service) SendMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	owner := s.owner(call.Principal)
	hl, err := sendScope(call, req)
	if err != nil {
		return nil, err
	}
	release := turnRelease(ctx) // max_turns (AUTH-6): the limits interceptor's count of this turn
	immediate := req.Configuration != nil && req.Configuration.ReturnImmediately
	r, first, sub, prior, err := s.start(ctx, owner, call, req, immediate)
	if err != nil {
		release()
		return nil, err
	}
	if prior != nil {
		release() // a resend (RPC-18) starts no turn
		return s.resendResult(ctx, owner, prior, hl, immediate)
	}
	call.Info.setTask(first.ID, first.ContextID)
	defer r.unsubscribe(sub)
	if req.Configuration != nil && req.Configuration.ReturnImmediately {
		t := s.trimTask(first, hl, true)
		return &a2a.SendMessageResponse{Task: &t}, nil
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		// The caller went away; the turn goes on. Answer with what we have.
	}
	r.mu.Lock()
	invalid, unstored := r.invalidResponse, r.unstored
	r.mu.Unlock()
	if unstored {
		return nil, fmt.Errorf("sending message: the turn could not start: %w", store.ErrUnavailable)
	}
	if invalid != "" {
		// The backend's output broke the turn-event protocol before the
		// caller saw any task event (A2A 1.0 §3.3); the task is FAILED.
		id, _ := r.ids()
		return nil, errInvalidResponse(id, invalid)
	}
	t := s.trimTask(r.snapshot(), hl, true)
	call.Info.setTaskOf(&t)
	if m := DirectReply(&t, s.cfg.Namespace); m != nil {
		return &a2a.SendMessageResponse{Message: m}, nil // a message event's reply (Appendix A)
	}
	return &a2a.SendMessageResponse{Task: &t}, nil
}

// SendStreamingMessage runs a turn and streams its events: the Task first,
// then status and artifact updates, ending when the turn ends.
func (s *Service) SendStreamingMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (Stream, error) {
	owner := s.owner(call.Principal)
	hl, err := sendScope(call, req)
	if err != nil {
		return nil, err
	}
	release := turnRelease(ctx) // max_turns (AUTH-6): the limits interceptor's count of this turn
	r, first, sub, prior, err := s.start(ctx, owner, call, req, true)
	if err != nil {
		release()
		return nil, err
	}
	if prior != nil {
		release() // a resend (RPC-18) starts no turn
		return s.resendStream(ctx, owner, prior, hl)
	}
	call.Info.setTask(first.ID, first.ContextID)
	first = s.trimTask(first, hl, true)
	return &runStream{first: &first, firstSeq: r.start, sub: sub, run: r, cancelOnClose: s.cfg.CancelOnDisconnect}, nil
}

// GetTask returns the caller's task with historyLength applied (RPC-8).
func (s *Service) GetTask(ctx context.Context, call Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	owner := s.owner(call.Principal)
	if err := call.scopeTask(&req.Tenant, "id", req.ID); err != nil {
		return nil, err
	}
	hl, err := historyLength(req.HistoryLength)
	if err != nil {
		return nil, err
	}
	t, err := s.loadTask(ctx, owner, req.ID)
	if err != nil {
		return nil, err
	}
	out := s.trimTask(*t, hl, true)
	call.Info.setTaskOf(&out)
	return &out, nil
}

// loadTask returns the live snapshot of a running task, else the stored one.
func (s *Service) loadTask(ctx context.Context, owner, id string) (*a2a.Task, error) {
	if v, ok := s.hub.runs.Load(id); ok {
		if r := v.(*run); r.owner == owner {
			t := r.snapshot()
			return &t, nil
		}
		return nil, a2a.ErrTaskNotFound(id)
	}
	t, err := s.st.GetTask(ctx, owner, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(id)
	}
	if err != nil {
		s.cfg.Logger.Error("reading task", errField(err))
		return nil, a2a.ErrInternal()
	}
	return t, nil
}

// ListTasks returns one page of the caller's tasks (RPC-9).
func (s *Service) ListTasks(ctx context.Context, call Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	owner := s.owner(call.Principal)
	req.Tenant = call.tenant(req.Tenant)
	if err := call.checkTenant(req.Tenant, ""); err != nil {
		return nil, err
	}
	q := store.ListQuery{Owner: owner, Limit: 50}
	if req.PageSize != nil {
		if *req.PageSize < 1 || *req.PageSize > 100 {
			return nil, a2a.ErrInvalidParams("pageSize", "must be between 1 and 100")
		}
		q.Limit = int(*req.PageSize)
	}
	if req.ContextID != "" {
		if err := checkID("contextId", req.ContextID); err != nil {
			return nil, err
		}
		q.ContextID = req.ContextID
	}
	if req.Status != "" && req.Status != a2a.TaskStateUnspecified {
		q.State = req.Status
	}
	if req.StatusTimestampAfter != "" {
		ts, err := a2a.ParseTimestamp(req.StatusTimestampAfter)
		if err != nil {
			return nil, a2a.ErrInvalidParams("statusTimestampAfter", "must be an RFC 3339 timestamp")
		}
		q.StatusAfter = ts
	}
	hl, err := historyLength(req.HistoryLength)
	if err != nil {
		return nil, err
	}
	q.IncludeArtifacts = req.IncludeArtifacts != nil && *req.IncludeArtifacts
	filter := pageFilter{owner: owner, contextID: q.ContextID, status: string(q.State), after: q.StatusAfter}
	if req.PageToken != "" {
		c, ok := s.tokens.decode(filter, req.PageToken)
		if !ok {
			return nil, a2a.ErrInvalidParams("pageToken", "is not a valid page token for these filters")
		}
		q.After = c
	}
	res, err := s.st.ListTasks(ctx, q)
	if err != nil {
		s.cfg.Logger.Error("listing tasks", errField(err))
		return nil, a2a.ErrInternal()
	}
	out := &a2a.ListTasksResponse{Tasks: make([]a2a.Task, 0, len(res.Tasks)), PageSize: int32(q.Limit), TotalSize: int32(res.Total)}
	for _, t := range res.Tasks {
		out.Tasks = append(out.Tasks, s.trimTask(t, hl, q.IncludeArtifacts))
	}
	out.NextPageToken = s.tokens.encode(filter, res.Next)
	return out, nil
}

// GetExtendedAgentCard returns the authenticated extended card (CARD-8) as
// served at call.BaseURL; call.Tenant is the request's A2A tenant.
func (s *Service) GetExtendedAgentCard(ctx context.Context, call Call) (*a2a.AgentCard, error) {
	if err := call.checkTenant(call.Tenant, ""); err != nil {
		return nil, err
	}
	if s.cfg.ExtendedCard == nil {
		return nil, a2a.ErrUnsupportedOperation("The extended agent card is not available: authentication is not configured")
	}
	c, err := s.cfg.ExtendedCard(ctx, call.BaseURL)
	if err != nil || c == nil {
		return nil, &a2a.Error{Code: a2a.CodeExtendedCardNotConfigured, Message: "Extended agent card is not configured"}
	}
	return c, nil
}

// ErrPushNotSupported is the answer of every push-config operation while push
// notifications are off.
func ErrPushNotSupported() *a2a.Error {
	return &a2a.Error{Code: a2a.CodePushNotificationNotSupported, Message: "Push notifications are not supported"}
}

func configHistory(req *a2a.SendMessageRequest) *int32 {
	if req.Configuration == nil {
		return nil
	}
	return req.Configuration.HistoryLength
}

func historyLength(v *int32) (*int32, error) {
	if v != nil && *v < 0 {
		return nil, a2a.ErrInvalidParams("historyLength", "must not be negative")
	}
	return v, nil
}

// trimTask applies historyLength (nil → the configured cap) and drops
// artifacts unless wanted. t is a copy; its slices are re-sliced only.
func (s *Service) trimTask(t a2a.Task, hl *int32, artifacts bool) a2a.Task {
	n := s.cfg.HistoryLimit
	if hl != nil {
		n = int(*hl)
	}
	switch {
	case n == 0:
		t.History = nil
	case len(t.History) > n:
		t.History = t.History[len(t.History)-n:]
	}
	if !artifacts {
		t.Artifacts = nil
	}
	return t
}

func stateWord(s a2a.TaskState) string {
	switch s {
	case a2a.TaskStateCompleted:
		return "completed"
	case a2a.TaskStateFailed:
		return "failed"
	case a2a.TaskStateCanceled:
		return "canceled"
	case a2a.TaskStateRejected:
		return "rejected"
	}
	return "finished"
}

// agentMessage returns an agent message of one text part. The message,
// its part and the part's text are one allocation (issue 29: a turn makes
// one per text chunk); the message is as a2a.TextPart would build it.
func agentMessage(contextID, taskID, text string) *a2a.Message {
	m := &oneTextMessage{text: text}
	m.part[0].Text = &m.text
	m.msg = a2a.Message{MessageID: newID(), ContextID: contextID, TaskID: taskID, Role: a2a.RoleAgent, Parts: m.part[:]}
	return &m.msg
}

// oneTextMessage is what agentMessage allocates at once.
type oneTextMessage struct {
	msg  a2a.Message
	part [1]a2a.Part
	text string
}
