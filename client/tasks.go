package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SendMessage sends a message and waits for the task (or a direct message).
func (c *Client) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.SendMessageResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.SendMessageResponse
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodSendMessage, http.MethodPost, "/message:send", nil, req, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodSendMessage, req, &out)
	}
	if err != nil {
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
	var out a2a.Task
	if c.REST() {
		q := url.Values{}
		if historyLength >= 0 {
			q.Set("historyLength", strconv.Itoa(historyLength))
		}
		if err := c.rest(ctx, a2a.MethodGetTask, http.MethodGet, "/tasks/"+url.PathEscape(id), q, nil, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	req := a2a.GetTaskRequest{ID: id, Tenant: c.Interface.Tenant}
	if historyLength >= 0 {
		h := int32(historyLength)
		req.HistoryLength = &h
	}
	if err := c.rpc(ctx, a2a.MethodGetTask, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListTasks lists tasks.
func (c *Client) ListTasks(ctx context.Context, req *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	c.setTenant(&req.Tenant)
	var out a2a.ListTasksResponse
	if c.REST() {
		q := url.Values{}
		if req.ContextID != "" {
			q.Set("contextId", req.ContextID)
		}
		if req.Status != "" {
			q.Set("status", string(req.Status))
		}
		if req.PageSize != nil {
			q.Set("pageSize", strconv.Itoa(int(*req.PageSize)))
		}
		if req.PageToken != "" {
			q.Set("pageToken", req.PageToken)
		}
		if req.HistoryLength != nil {
			q.Set("historyLength", strconv.Itoa(int(*req.HistoryLength)))
		}
		if req.IncludeArtifacts != nil {
			q.Set("includeArtifacts", strconv.FormatBool(*req.IncludeArtifacts))
		}
		if req.StatusTimestampAfter != "" {
			q.Set("statusTimestampAfter", req.StatusTimestampAfter)
		}
		if err := c.rest(ctx, a2a.MethodListTasks, http.MethodGet, "/tasks", q, nil, &out); err != nil {
			return nil, err
		}
		return &out, nil
	}
	if err := c.rpc(ctx, a2a.MethodListTasks, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CancelTask asks the server to cancel a task and returns it.
func (c *Client) CancelTask(ctx context.Context, id string) (*a2a.Task, error) {
	var out a2a.Task
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodCancelTask, http.MethodPost, "/tasks/"+url.PathEscape(id)+":cancel", nil, struct{}{}, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodCancelTask, a2a.CancelTaskRequest{ID: id, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
