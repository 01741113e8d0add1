package client

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// CreatePushConfig registers a push config on a task.
func (c *Client) CreatePushConfig(ctx context.Context, cfg *a2a.TaskPushNotificationConfig) (*a2a.TaskPushNotificationConfig, error) {
	c.setTenant(&cfg.Tenant)
	var out a2a.TaskPushNotificationConfig
	if err := c.t.Call(ctx, a2a.MethodCreatePushConfig, cfg, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetPushConfig returns one push config of a task.
func (c *Client) GetPushConfig(ctx context.Context, taskID, id string) (*a2a.TaskPushNotificationConfig, error) {
	var out a2a.TaskPushNotificationConfig
	req := a2a.GetTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}
	if err := c.t.Call(ctx, a2a.MethodGetPushConfig, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListPushConfigs lists the push configs of a task.
func (c *Client) ListPushConfigs(ctx context.Context, taskID string, pageSize int, pageToken string) (*a2a.ListTaskPushNotificationConfigsResponse, error) {
	var out a2a.ListTaskPushNotificationConfigsResponse
	req := a2a.ListTaskPushNotificationConfigsRequest{TaskID: taskID, PageSize: int32(pageSize), PageToken: pageToken, Tenant: c.Interface.Tenant}
	if err := c.t.Call(ctx, a2a.MethodListPushConfigs, req, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeletePushConfig deletes one push config of a task.
func (c *Client) DeletePushConfig(ctx context.Context, taskID, id string) error {
	req := a2a.DeleteTaskPushNotificationConfigRequest{TaskID: taskID, ID: id, Tenant: c.Interface.Tenant}
	return c.t.Call(ctx, a2a.MethodDeletePushConfig, req, nil)
}
