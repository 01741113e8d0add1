package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Invocation is one call on its way through the interceptors to the
// Handler they wrap.
type Invocation struct {
	// Method is the A2A 1.0 method name (a2a.Method…), MethodOpenArtifact,
	// or for a refused call the method the caller named ("" when it named
	// none; see Handler.Refuse).
	Method string
	// Call is the call; an interceptor may change it for those after it
	// and the handler.
	Call Call
	// Request is the request value: *a2a.SendMessageRequest for both send
	// methods, *a2a.GetTaskRequest, …, ArtifactRef for MethodOpenArtifact;
	// nil for GetExtendedAgentCard and refused calls.
	Request any
	// Refused is the binding's error for a call it could not serve
	// (Handler.Invalid, Handler.Refuse): the handler answers with it
	// unless an interceptor answers first.
	Refused error
	// Unread marks a Handler.Refuse: the message was not read as an A2A
	// call, so the version and extension rules do not apply to it.
	Unread bool
}

// Next runs the rest of the chain: the interceptors after the current one,
// then the handler. Its result is the operation's result (a Stream for
// the streaming methods).
type Next func(ctx context.Context, inv *Invocation) (any, error)

// Interceptor runs around every call of a Handler (see Chain): it may
// refuse the call (return without calling next), change inv.Call, or look
// at or wrap what next returned (a Stream, for the streaming methods).
type Interceptor func(ctx context.Context, inv *Invocation, next Next) (any, error)

// Chain returns a Handler that runs every call through ics, the first
// outermost, and then h. It is built once (per site) and shared by the
// site's bindings.
func Chain(h Handler, ics ...Interceptor) Handler {
	c := &chain{h: h}
	next := c.invoke
	for i := len(ics) - 1; i >= 0; i-- {
		ic, inner := ics[i], next
		next = func(ctx context.Context, inv *Invocation) (any, error) { return ic(ctx, inv, inner) }
	}
	c.run = next
	return c
}

// chain is the Handler Chain returns.
type chain struct {
	h   Handler
	run Next
}

// do runs one call through the chain and types its result; the call's
// RequestInfo learns its method first.
func do[R any](ctx context.Context, c *chain, method string, call Call, req any) (R, error) {
	if method != MethodOpenArtifact {
		call.Info.setMethod(method)
	}
	res, err := c.run(ctx, &Invocation{Method: method, Call: call, Request: req})
	out, _ := res.(R)
	return out, err
}

// invoke is the end of the chain: the handler's operation for inv.
func (c *chain) invoke(ctx context.Context, inv *Invocation) (any, error) {
	if inv.Refused != nil {
		if inv.Unread {
			return nil, c.h.Refuse(ctx, inv.Call, inv.Method, inv.Refused)
		}
		return nil, c.h.Invalid(ctx, inv.Call, inv.Method, inv.Refused)
	}
	call := inv.Call
	switch inv.Method {
	case a2a.MethodSendMessage:
		return c.h.SendMessage(ctx, call, request[*a2a.SendMessageRequest](inv))
	case a2a.MethodSendStreamingMessage:
		return c.h.SendStreamingMessage(ctx, call, request[*a2a.SendMessageRequest](inv))
	case a2a.MethodGetTask:
		return c.h.GetTask(ctx, call, request[*a2a.GetTaskRequest](inv))
	case a2a.MethodListTasks:
		return c.h.ListTasks(ctx, call, request[*a2a.ListTasksRequest](inv))
	case a2a.MethodCancelTask:
		return c.h.CancelTask(ctx, call, request[*a2a.CancelTaskRequest](inv))
	case a2a.MethodSubscribeToTask:
		return c.h.SubscribeToTask(ctx, call, request[*a2a.SubscribeToTaskRequest](inv))
	case a2a.MethodCreatePushConfig:
		return c.h.CreateTaskPushNotificationConfig(ctx, call, request[*a2a.TaskPushNotificationConfig](inv))
	case a2a.MethodGetPushConfig:
		return c.h.GetTaskPushNotificationConfig(ctx, call, request[*a2a.GetTaskPushNotificationConfigRequest](inv))
	case a2a.MethodListPushConfigs:
		return c.h.ListTaskPushNotificationConfigs(ctx, call, request[*a2a.ListTaskPushNotificationConfigsRequest](inv))
	case a2a.MethodDeletePushConfig:
		return c.h.DeleteTaskPushNotificationConfig(ctx, call, request[*a2a.DeleteTaskPushNotificationConfigRequest](inv))
	case MethodOpenArtifact:
		return c.h.OpenArtifact(ctx, call, request[ArtifactRef](inv))
	case a2a.MethodGetExtendedAgentCard:
		return c.h.GetExtendedAgentCard(ctx, call)
	}
	return nil, c.h.Invalid(ctx, call, inv.Method, a2a.ErrInternal())
}

// request returns the request value of inv as T (its zero value when an
// interceptor replaced it with another type).
func request[T any](inv *Invocation) T {
	r, _ := inv.Request.(T)
	return r
}

// SendMessage implements Handler.
func (c *chain) SendMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	return do[*a2a.SendMessageResponse](ctx, c, a2a.MethodSendMessage, call, req)
}

// SendStreamingMessage implements Handler.
func (c *chain) SendStreamingMessage(ctx context.Context, call Call, req *a2a.SendMessageRequest) (Stream, error) {
	return do[Stream](ctx, c, a2a.MethodSendStreamingMessage, call, req)
}

// GetTask implements Handler.
func (c *chain) GetTask(ctx context.Context, call Call, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	return do[*a2a.Task](ctx, c, a2a.MethodGetTask, call, req)
}

// ListTasks implements Handler.
func (c *chain) ListTasks(ctx context.Context, call Call, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return do[*a2a.ListTasksResponse](ctx, c, a2a.MethodListTasks, call, req)
}

// CancelTask implements Handler.
func (c *chain) CancelTask(ctx context.Context, call Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	return do[*a2a.Task](ctx, c, a2a.MethodCancelTask, call, req)
}

// SubscribeToTask implements Handler.
func (c *chain) SubscribeToTask(ctx context.Context, call Call, req *a2a.SubscribeToTaskRequest) (Stream, error) {
	return do[Stream](ctx, c, a2a.MethodSubscribeToTask, call, req)
}

// CreateTaskPushNotificationConfig implements Handler.
func (c *chain) CreateTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	return do[*a2a.TaskPushNotificationConfig](ctx, c, a2a.MethodCreatePushConfig, call, req)
}

// GetTaskPushNotificationConfig implements Handler.
func (c *chain) GetTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.GetTaskPushNotificationConfigRequest) (*a2a.TaskPushNotificationConfig, error) {
	return do[*a2a.TaskPushNotificationConfig](ctx, c, a2a.MethodGetPushConfig, call, req)
}

// ListTaskPushNotificationConfigs implements Handler.
func (c *chain) ListTaskPushNotificationConfigs(ctx context.Context, call Call, req *a2a.ListTaskPushNotificationConfigsRequest) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	return do[*a2a.ListTaskPushNotificationConfigsResponse](ctx, c, a2a.MethodListPushConfigs, call, req)
}

// DeleteTaskPushNotificationConfig implements Handler.
func (c *chain) DeleteTaskPushNotificationConfig(ctx context.Context, call Call, req *a2a.DeleteTaskPushNotificationConfigRequest) (*struct{}, error) {
	return do[*struct{}](ctx, c, a2a.MethodDeletePushConfig, call, req)
}

// GetExtendedAgentCard implements Handler.
func (c *chain) GetExtendedAgentCard(ctx context.Context, call Call) (*a2a.AgentCard, error) {
	return do[*a2a.AgentCard](ctx, c, a2a.MethodGetExtendedAgentCard, call, nil)
}

// OpenArtifact implements Handler.
func (c *chain) OpenArtifact(ctx context.Context, call Call, ref ArtifactRef) (*ArtifactFile, error) {
	return do[*ArtifactFile](ctx, c, MethodOpenArtifact, call, ref)
}

// Invalid implements Handler: the call goes through the interceptors too.
func (c *chain) Invalid(ctx context.Context, call Call, method string, err error) error {
	return c.refuse(ctx, &Invocation{Method: method, Call: call, Refused: err})
}

// Refuse implements Handler: the message goes through the interceptors
// too, marked Unread.
func (c *chain) Refuse(ctx context.Context, call Call, method string, err error) error {
	return c.refuse(ctx, &Invocation{Method: method, Call: call, Refused: err, Unread: true})
}

// refuse runs a refused call through the chain and returns its error.
func (c *chain) refuse(ctx context.Context, inv *Invocation) error {
	if inv.Refused == nil {
		inv.Refused = a2a.ErrInternal()
	}
	_, err := c.run(ctx, inv)
	return err
}
