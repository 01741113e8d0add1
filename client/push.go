package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// CreatePushConfig registers a push config on a task.
func (c *Client) CreatePushConfig(ctx context.Context, cfg *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c.setTenant(&cfg.Tenant)
	var out a2a.TaskPushNotificationConfig
	var err error
	if c.REST() {
		body := *cfg
		body.Tenant = ""
		err = c.rest(ctx, a2a.MethodCreatePushConfig, http.MethodPost, "/tasks/"+url.PathEscape(cfg.TaskID)+"/pushNotificationConfigs", nil, body, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodCreatePushConfig, cfg, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPushConfig returns one push config of a task.
func (c *Client) GetPushConfig(ctx context.Context, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var out a2a.TaskPushNotificationConfig
	var err error
	if c.REST() {
		err = c.rest(ctx, a2a.MethodGetPushConfig, http.MethodGet, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs/"+url.PathEscape(id), nil, nil, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodGetPushConfig, a2a.GetTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPushConfigs lists the push configs of a task.
func (c *Client) ListPushConfigs(ctx context.Context, taskID string, pageSize int, pageToken string) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	var out a2a.ListTaskPushNotificationConfigsResponse
	var err error
	if c.REST() {
		q := url.Values{}
		if pageSize > 0 {
			q.Set("pageSize", strconv.Itoa(pageSize))
		}
		if pageToken != "" {
			q.Set("pageToken", pageToken)
		}
		err = c.rest(ctx, a2a.MethodListPushConfigs, http.MethodGet, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs", q, nil, &out)
	} else {
		err = c.rpc(ctx, a2a.MethodListPushConfigs, a2a.ListTaskPushNotificationConfigsRequest{TaskID: taskID, PageSize: int32(pageSize), PageToken: pageToken, Tenant: c.Interface.Tenant}, &out)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePushConfig deletes one push config of a task.
func (c *Client) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if c.REST() {
		return c.rest(ctx, a2a.MethodDeletePushConfig, http.MethodDelete, "/tasks/"+url.PathEscape(taskID)+"/pushNotificationConfigs/"+url.PathEscape(id), nil, nil, nil)
	}
	return c.rpc(ctx, a2a.MethodDeletePushConfig, a2a.DeleteTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}, nil)
}
