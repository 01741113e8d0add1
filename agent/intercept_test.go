package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/agenttest"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

func textMessage(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: &a2a.Message{MessageID: "m-" + text, Role: a2a.RoleUser, Parts: []a2a.Part{{Text: &text}}}}
}

// TestChainOrder: interceptors run outermost first around the handler;
// one may change the call for those after it, refuse it (the operation
// does not run) or replace its result.
func TestChainOrder(t *testing.T) {
	svc, _ := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{}})
	var trace []string
	mark := func(name string) agent.Interceptor {
		return func(ctx context.Context, inv *agent.Invocation, next agent.Next) (any, error) {
			trace = append(trace, name+">"+inv.Method)
			res, err := next(ctx, inv)
			trace = append(trace, "<"+name)
			return res, err
		}
	}
	principal := func(ctx context.Context, inv *agent.Invocation, next agent.Next) (any, error) {
		inv.Call.Principal = "carol"
		return next(ctx, inv)
	}
	h := agent.Chain(svc, mark("a"), principal, mark("b"))
	call := agent.Call{Version: "1.0"}
	resp, err := h.SendMessage(t.Context(), call, textMessage("hi"))
	if err != nil || resp.Task == nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if got := strings.Join(trace, " "); got != "a>SendMessage b>SendMessage <b <a" {
		t.Errorf("trace = %q", got)
	}
	// The principal the interceptor set owns the task.
	if _, err := svc.GetTask(t.Context(), agent.Call{Principal: "carol"}, &a2a.GetTaskRequest{ID: resp.Task.ID}); err != nil {
		t.Errorf("the task is not carol's: %v", err)
	}
	if _, err := svc.GetTask(t.Context(), agent.Call{}, &a2a.GetTaskRequest{ID: resp.Task.ID}); err == nil {
		t.Error("the task is visible to the call's own (empty) principal")
	}

	refused := errors.New("refused")
	ran := false
	guard := func(ctx context.Context, inv *agent.Invocation, next agent.Next) (any, error) {
		if inv.Method == a2a.MethodCancelTask {
			return nil, refused
		}
		return next(ctx, inv)
	}
	spy := func(ctx context.Context, inv *agent.Invocation, next agent.Next) (any, error) {
		ran = true
		return next(ctx, inv)
	}
	h = agent.Chain(svc, guard, spy)
	if _, err := h.CancelTask(t.Context(), call, &a2a.CancelTaskRequest{ID: resp.Task.ID}); !errors.Is(err, refused) {
		t.Errorf("CancelTask = %v, want the interceptor's refusal", err)
	}
	if ran {
		t.Error("an interceptor after the refusing one ran")
	}
	replaced := &a2a.Task{ID: "replaced"}
	h = agent.Chain(svc, func(ctx context.Context, inv *agent.Invocation, next agent.Next) (any, error) {
		if _, err := next(ctx, inv); err != nil {
			return nil, err
		}
		return replaced, nil
	})
	got, err := h.GetTask(t.Context(), agent.Call{Principal: "carol"}, &a2a.GetTaskRequest{ID: resp.Task.ID})
	if err != nil || got != replaced {
		t.Errorf("GetTask = %v %v, want the interceptor's result", got, err)
	}
}

// TestNewHandlerNegotiatesInvalidNotRefused (RPC-2, RPC-3, OPS-2): the
// version rules apply to an operation and to a call the binding found
// invalid (a version error wins over the binding's), not to a message the
// carrier refused unread; every one is counted under Call.Binding; the
// activated extensions reach Call.Info.
func TestNewHandlerNegotiatesInvalidNotRefused(t *testing.T) {
	const ext = "urn:test:ext"
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{}, Extensions: []string{ext}})
	h := agent.NewHandler(svc)
	ctx := t.Context()
	bad := a2a.ErrInvalidParams("message", "is required")

	old := agent.Call{Binding: "probe", Version: "0.3"}
	if err := h.Invalid(ctx, old, a2a.MethodSendMessage, bad); a2a.AsError(err).Code != a2a.CodeVersionNotSupported {
		t.Errorf("Invalid with version 0.3 = %v, want VersionNotSupportedError", err)
	}
	if err := h.Refuse(ctx, old, a2a.MethodSendMessage, bad); a2a.AsError(err).Code != a2a.CodeInvalidParams {
		t.Errorf("Refuse with version 0.3 = %v, want the carrier's own error", err)
	}
	if _, err := h.ListTasks(ctx, old, &a2a.ListTasksRequest{}); a2a.AsError(err).Code != a2a.CodeVersionNotSupported {
		t.Errorf("ListTasks with version 0.3 = %v, want VersionNotSupportedError", err)
	}
	if n := agenttest.Requests(t, m, "probe", a2a.MethodSendMessage, "VERSION_NOT_SUPPORTED"); n != 1 {
		t.Errorf("version refusals of SendMessage counted %v times, want 1", n)
	}
	if n := agenttest.Requests(t, m, "probe", a2a.MethodSendMessage, "INVALID_PARAMS"); n != 1 {
		t.Errorf("carrier refusals counted %v times, want 1", n)
	}

	info := new(agent.RequestInfo)
	call := agent.Call{Binding: "probe", Version: "1.0", Extensions: []string{ext, "urn:unknown"}, Info: info}
	if _, err := h.ListTasks(ctx, call, &a2a.ListTasksRequest{}); err != nil {
		t.Fatalf("ListTasks: %v", err)
	}
	if got := info.Extensions(); len(got) != 1 || got[0] != ext {
		t.Errorf("activated extensions = %v, want [%s]", got, ext)
	}
	if method, _, _ := info.Get(); method != a2a.MethodListTasks {
		t.Errorf("RequestInfo method = %q", method)
	}
	if n := agenttest.Requests(t, m, "probe", a2a.MethodListTasks, "ok"); n != 1 {
		t.Errorf("ListTasks ok counted %v times, want 1", n)
	}
}

// TestNewHandlerCountsStreams (OPS-2): a stream the handler opens counts
// in caddy_a2a_open_streams until it is closed or detached, once, on
// every binding alike (none has to call a hook).
func TestNewHandlerCountsStreams(t *testing.T) {
	svc, m := agenttest.Service(t, agent.Config{Backend: backend.EchoBackend{}})
	h := agent.NewHandler(svc)
	call := agent.Call{Version: "1.0"}
	a, err := h.SendStreamingMessage(t.Context(), call, textMessage("one"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.SendStreamingMessage(t.Context(), call, textMessage("two"))
	if err != nil {
		t.Fatal(err)
	}
	if n := agenttest.OpenStreams(t, m); n != 2 {
		t.Errorf("open streams = %v, want 2", n)
	}
	a.Close()
	a.Close() // a second Close does not count twice
	if n := agenttest.OpenStreams(t, m); n != 1 {
		t.Errorf("open streams after Close = %v, want 1", n)
	}
	b.Detach()
	if n := agenttest.OpenStreams(t, m); n != 0 {
		t.Errorf("open streams after Detach = %v, want 0", n)
	}
}

// TestNewHandlerLimits (AUTH-6): the limits interceptor refuses a method
// the caller may not use before the operation runs, and a message over
// max_turns; a refused call starts no turn.
func TestNewHandlerLimits(t *testing.T) {
	svc, _ := agenttest.Service(t, agent.Config{
		Backend: backend.EchoBackend{},
		Limits:  map[string]agent.LimitRule{"ci": {AllowMethods: []string{a2a.MethodSendMessage, a2a.MethodListTasks}, MaxTurns: 1}},
	})
	h := agent.NewHandler(svc)
	call := agent.Call{Principal: "ci", Version: "1.0"}
	if _, err := h.GetTask(t.Context(), call, &a2a.GetTaskRequest{ID: "nope"}); a2a.AsError(err).Code != a2a.CodePermissionDenied {
		t.Errorf("GetTask = %v, want PERMISSION_DENIED before TaskNotFound", err)
	}
	if _, err := h.SendMessage(t.Context(), call, textMessage("first")); err != nil {
		t.Fatalf("first message: %v", err)
	}
	// The first turn has ended (blocking send): its max_turns slot is back.
	if _, err := h.SendMessage(t.Context(), call, textMessage("second")); err != nil {
		t.Errorf("second message after the first ended: %v", err)
	}
	list, err := h.ListTasks(t.Context(), call, &a2a.ListTasksRequest{})
	if err != nil || len(list.Tasks) != 2 {
		t.Errorf("ListTasks = %d tasks, %v; want 2", len(list.Tasks), err)
	}
}
