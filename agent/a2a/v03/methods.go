package v03

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// JSON-RPC method names of A2A 0.3.
const (
	MethodSend              = "message/send"
	MethodStream            = "message/stream"
	MethodGet               = "tasks/get"
	MethodCancel            = "tasks/cancel"
	MethodResubscribe       = "tasks/resubscribe"
	MethodPushSet           = "tasks/pushNotificationConfig/set"
	MethodPushGet           = "tasks/pushNotificationConfig/get"
	MethodPushList          = "tasks/pushNotificationConfig/list"
	MethodPushDelete        = "tasks/pushNotificationConfig/delete"
	MethodAuthenticatedCard = "agent/getAuthenticatedExtendedCard"
)

// methods maps each 0.3 method to its 1.0 method.
var methods = map[string]string{
	MethodSend:              a2a.MethodSendMessage,
	MethodStream:            a2a.MethodSendStreamingMessage,
	MethodGet:               a2a.MethodGetTask,
	MethodCancel:            a2a.MethodCancelTask,
	MethodResubscribe:       a2a.MethodSubscribeToTask,
	MethodPushSet:           a2a.MethodCreatePushConfig,
	MethodPushGet:           a2a.MethodGetPushConfig,
	MethodPushList:          a2a.MethodListPushConfigs,
	MethodPushDelete:        a2a.MethodDeletePushConfig,
	MethodAuthenticatedCard: a2a.MethodGetExtendedAgentCard,
}

// Method10 returns the 1.0 method of a 0.3 method name; false when m is
// not a 0.3 method (a 0.3 request is recognised by its method, RPC-2).
func Method10(m string) (string, bool) {
	v, ok := methods[m]
	return v, ok
}

// Method03 returns the 0.3 method of a 1.0 method ("" for ListTasks,
// which 0.3 lacks).
func Method03(m string) string {
	for k, v := range methods {
		if v == m {
			return k
		}
	}
	return ""
}

// ParamsTo10 translates the params of the 0.3 method m03 into the params
// of its 1.0 method, as JSON. A params member the 0.3 schema refuses is an
// InvalidParamsError naming the field.
func ParamsTo10(m03 string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return nil, a2a.ErrInvalidParams("params", "must be an object")
	}
	var out any
	var err error
	switch m03 {
	case MethodSend, MethodStream:
		var p SendParams
		if err = decode(raw, &p); err == nil {
			out, err = SendParams10(&p)
		}
	case MethodGet:
		var p TaskQueryParams
		if err = decode(raw, &p); err == nil {
			out = a2a.GetTaskRequest{ID: p.ID, HistoryLength: p.HistoryLength}
		}
	case MethodCancel:
		var p TaskIDParams
		if err = decode(raw, &p); err == nil {
			out = a2a.CancelTaskRequest{ID: p.ID, Metadata: p.Metadata}
		}
	case MethodResubscribe:
		var p TaskIDParams
		if err = decode(raw, &p); err == nil {
			out = a2a.SubscribeToTaskRequest{ID: p.ID}
		}
	case MethodPushSet:
		var p TaskPushConfig
		if err = decode(raw, &p); err == nil {
			c := PushConfig10(p.TaskID, &p.PushNotificationConfig)
			if c.ID == "" {
				// 0.3 servers name a task's default config after the task.
				c.ID = p.TaskID
			}
			out = c
		}
	case MethodPushGet, MethodPushDelete:
		var p PushConfigParams
		if err = decode(raw, &p); err == nil {
			id := p.PushNotificationConfigID
			if id == "" {
				id = p.ID // the task's default config
			}
			out = a2a.GetTaskPushNotificationConfigRequest{TaskID: p.ID, ID: id}
		}
	case MethodPushList:
		var p TaskIDParams
		if err = decode(raw, &p); err == nil {
			out = a2a.ListTaskPushNotificationConfigsRequest{TaskID: p.ID}
		}
	case MethodAuthenticatedCard:
		out = struct{}{}
	default:
		return nil, a2a.NewError(a2a.CodeMethodNotFound, "Method not found")
	}
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

// decode reads 0.3 params; a type mismatch is an InvalidParamsError.
func decode(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return a2a.ErrInvalidParams(te.Field, "has the wrong type")
		}
		return a2a.ErrInvalidParams("params", "do not match the A2A 0.3 schema")
	}
	return nil
}

// SendParams10 translates 0.3 MessageSendParams into a 1.0
// SendMessageRequest: blocking false → returnImmediately, the inline
// pushNotificationConfig → taskPushNotificationConfig.
func SendParams10(p *SendParams) (*a2a.SendMessageRequest, error) {
	m, err := Message10(p.Message, "message")
	if err != nil {
		var fe fieldError
		if errors.As(err, &fe) {
			return nil, a2a.ErrInvalidParams(fe.field, fe.msg)
		}
		return nil, a2a.ErrInvalidParams("message", err.Error())
	}
	req := &a2a.SendMessageRequest{Message: m, Metadata: p.Metadata}
	if c := p.Configuration; c != nil {
		req.Configuration = &a2a.SendMessageConfiguration{
			AcceptedOutputModes: c.AcceptedOutputModes,
			HistoryLength:       c.HistoryLength,
			ReturnImmediately:   c.Blocking != nil && !*c.Blocking,
		}
		if c.PushNotificationConfig != nil {
			req.Configuration.TaskPushNotificationConfig = PushConfig10("", c.PushNotificationConfig)
		}
	}
	return req, nil
}

// SendParams03 translates a 1.0 SendMessageRequest into 0.3
// MessageSendParams (for talking to a 0.3 upstream).
func SendParams03(r *a2a.SendMessageRequest) *SendParams {
	p := &SendParams{Message: Message03(r.Message), Metadata: r.Metadata}
	if c := r.Configuration; c != nil {
		blocking := !c.ReturnImmediately
		p.Configuration = &SendConfig{AcceptedOutputModes: c.AcceptedOutputModes, HistoryLength: c.HistoryLength, Blocking: &blocking}
		if c.TaskPushNotificationConfig != nil {
			pc := PushConfig03(c.TaskPushNotificationConfig).PushNotificationConfig
			p.Configuration.PushNotificationConfig = &pc
		}
	}
	return p
}

// PushConfig10 translates a 0.3 push config of taskID into 1.0: the first
// of authentication.schemes becomes authentication.scheme.
func PushConfig10(taskID string, c *PushConfig) *a2a.TaskPushNotificationConfig {
	out := &a2a.TaskPushNotificationConfig{ID: c.ID, TaskID: taskID, URL: c.URL, Token: c.Token}
	if a := c.Authentication; a != nil {
		out.Authentication = &a2a.AuthenticationInfo{Credentials: a.Credentials}
		if len(a.Schemes) > 0 {
			out.Authentication.Scheme = a.Schemes[0]
		}
	}
	return out
}

// PushConfig03 renders a 1.0 push config in 0.3 shape.
func PushConfig03(c *a2a.TaskPushNotificationConfig) *TaskPushConfig {
	out := &TaskPushConfig{TaskID: c.TaskID, PushNotificationConfig: PushConfig{ID: c.ID, URL: c.URL, Token: c.Token}}
	if a := c.Authentication; a != nil {
		out.PushNotificationConfig.Authentication = &PushAuth{Schemes: []string{a.Scheme}, Credentials: a.Credentials}
	}
	return out
}

// null is the JSON null result of tasks/pushNotificationConfig/delete.
var null = json.RawMessage("null")

// Result03 renders the result of 1.0 method m10 for a 0.3 caller: a Task
// or Message (message/send), a Task (tasks/get, tasks/cancel), 0.3 push
// configs, null (delete) and a 0.3 card.
func Result03(m10 string, res any) any {
	switch v := res.(type) {
	case *a2a.SendMessageResponse:
		return Event03(a2a.StreamResponse{Task: v.Task, Message: v.Message})
	case *a2a.Task:
		return Task03(v)
	case *a2a.TaskPushNotificationConfig:
		return PushConfig03(v)
	case *a2a.ListTaskPushNotificationConfigsResponse:
		out := make([]*TaskPushConfig, 0, len(v.Configs))
		for i := range v.Configs {
			out = append(out, PushConfig03(&v.Configs[i]))
		}
		return out
	case *a2a.AgentCard:
		return Card03(v)
	}
	if m10 == a2a.MethodDeletePushConfig {
		return null
	}
	return res
}
