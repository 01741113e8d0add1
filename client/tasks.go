package client

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SendMessage sends a message and waits for the task (or a direct message).
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.SendMessageResponse
	if err := c.t.Call(ctx, a2a.MethodSendMessage, req, &out); err != nil {
		return nil, err
	}
	if out.Task == nil && out.Message == nil {
		return nil, protocolf("SendMessage: the response holds neither a task nor a message")
	}
	return &out, nil
}

func (c *Client) setTenant(t *string) {
	if *t == "" {
		*t = c.Interface.Tenant
	}
}

// GetTask returns a task; historyLength < 0 leaves the server default.
func (c *Client) GetTask(ctx context.Context, id string, historyLength int) (*a2a.Task, error) {
	req := a2a.GetTaskRequest{ID: id, Tenant: c.Interface.Tenant}
	if historyLength >= 0 {
		h := int32(historyLength)
		req.HistoryLength = &h
	}
	var out a2a.Task
	if err := c.t.Call(ctx, a2a.MethodGetTask, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTasks lists tasks.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.ListTasksResponse
	if err := c.t.Call(ctx, a2a.MethodListTasks, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelTask asks the server to cancel a task and returns it.
func (c *Client) CancelTask(ctx context.Context, id string) (*a2a.Task, error) {
	var out a2a.Task
	if err := c.t.Call(ctx, a2a.MethodCancelTask, a2a.CancelTaskRequest{ID: id, Tenant: c.Interface.Tenant}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SendStreamingMessage sends a message and calls fn for each event until the
// stream ends (nil), fn returns an error, or ctx ends.
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error {
	c.setTenant(&req.Tenant)
	return c.t.Stream(ctx, a2a.MethodSendStreamingMessage, req, fn)
}

// SubscribeToTask streams the events of an existing task.
func (c *Client) SubscribeToTask(ctx context.Context, id string, fn func(a2a.StreamResponse) error) error {
	return c.t.Stream(ctx, a2a.MethodSubscribeToTask, a2a.SubscribeToTaskRequest{ID: id, Tenant: c.Interface.Tenant}, fn)
}
