package agent

import (
	"context"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// RequestInfo is what the service learned about one call — the A2A method,
// the task and its context — for the carrier to expose, e.g. as the Caddy
// request variables {http.vars.a2a.method}, {http.vars.a2a.task_id} and
// {http.vars.a2a.context_id} (AUTH-6). It is filled in as the call goes;
// safe for concurrent use. The zero value is ready.
type RequestInfo struct {
	mu                               sync.Mutex
	method, taskID, contextID, state string
	extensions                       []string
}

// Extensions returns the extensions activated for the call (RPC-3), in
// the order of the configuration, for the binding to echo (the
// A2A-Extensions response header); nil before negotiation or when none.
func (i *RequestInfo) Extensions() []string {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.extensions
}

// setExtensions records the activated extensions of the call.
func (i *RequestInfo) setExtensions(active []string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.extensions = active
	i.mu.Unlock()
}

// Get returns what is known so far ("" for what is not).
func (i *RequestInfo) Get() (method, taskID, contextID string) {
	if i == nil {
		return "", "", ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.method, i.taskID, i.contextID
}

// State returns the state of the call's task as last seen ("" when none).
func (i *RequestInfo) State() string {
	if i == nil {
		return ""
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.state
}

// setTaskOf records the task, context and state of t.
func (i *RequestInfo) setTaskOf(t *a2a.Task) {
	if i == nil || t == nil {
		return
	}
	i.setTask(t.ID, t.ContextID)
	i.mu.Lock()
	i.state = string(t.Status.State)
	i.mu.Unlock()
}

// setMethod records the A2A method of the call.
func (i *RequestInfo) setMethod(m string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	i.method = m
	i.mu.Unlock()
}

// setTask records the task and context of the call; empty values keep
// what was known.
func (i *RequestInfo) setTask(taskID, contextID string) {
	if i == nil {
		return
	}
	i.mu.Lock()
	if taskID != "" {
		i.taskID = taskID
	}
	if contextID != "" {
		i.contextID = contextID
	}
	i.mu.Unlock()
}

type requestInfoKey struct{}

// WithRequestInfo returns ctx carrying info, for a binding to put into the
// Call it builds (see RequestInfoFrom).
func WithRequestInfo(ctx context.Context, info *RequestInfo) context.Context {
	return context.WithValue(ctx, requestInfoKey{}, info)
}

// RequestInfoFrom returns the RequestInfo attached by WithRequestInfo, or
// nil.
func RequestInfoFrom(ctx context.Context) *RequestInfo {
	i, _ := ctx.Value(requestInfoKey{}).(*RequestInfo)
	return i
}
