package a2a

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// TaskState is the lifecycle state of a task, encoded as its proto enum name.
type TaskState string

// The task states of A2A 1.0.
const (
	TaskStateUnspecified   TaskState = "TASK_STATE_UNSPECIFIED"
	TaskStateSubmitted     TaskState = "TASK_STATE_SUBMITTED"
	TaskStateWorking       TaskState = "TASK_STATE_WORKING"
	TaskStateCompleted     TaskState = "TASK_STATE_COMPLETED"
	TaskStateFailed        TaskState = "TASK_STATE_FAILED"
	TaskStateCanceled      TaskState = "TASK_STATE_CANCELED"
	TaskStateInputRequired TaskState = "TASK_STATE_INPUT_REQUIRED"
	TaskStateRejected      TaskState = "TASK_STATE_REJECTED"
	TaskStateAuthRequired  TaskState = "TASK_STATE_AUTH_REQUIRED"
)

var taskStateByNumber = []TaskState{
	TaskStateUnspecified, TaskStateSubmitted, TaskStateWorking, TaskStateCompleted,
	TaskStateFailed, TaskStateCanceled, TaskStateInputRequired, TaskStateRejected,
	TaskStateAuthRequired,
}

// Terminal reports whether no further transition can leave the state.
func (s TaskState) Terminal() bool {
	switch s {
	case TaskStateCompleted, TaskStateFailed, TaskStateCanceled, TaskStateRejected:
		return true
	}
	return false
}

// Interrupted reports whether the task waits for the client (input or auth).
func (s TaskState) Interrupted() bool {
	return s == TaskStateInputRequired || s == TaskStateAuthRequired
}

// Valid reports whether s is one of the known state names (UNSPECIFIED excluded).
func (s TaskState) Valid() bool {
	for _, k := range taskStateByNumber[1:] {
		if s == k {
			return true
		}
	}
	return false
}

// ParseTaskState accepts a state name or its proto number, as ProtoJSON does.
func ParseTaskState(v string) (TaskState, error) {
	if n, err := strconv.Atoi(v); err == nil {
		if n >= 0 && n < len(taskStateByNumber) {
			return taskStateByNumber[n], nil
		}
		return "", fmt.Errorf("unknown task state %d", n)
	}
	s := TaskState(v)
	if s == TaskStateUnspecified || s.Valid() {
		return s, nil
	}
	return "", fmt.Errorf("unknown task state %q", v)
}

// UnmarshalJSON accepts the enum name or its number.
func (s *TaskState) UnmarshalJSON(b []byte) error {
	v, err := enumText(b)
	if err != nil {
		return fmt.Errorf("task state: %w", err)
	}
	st, err := ParseTaskState(v)
	if err != nil {
		return &json.UnmarshalTypeError{Value: "unknown enum value", Type: reflect.TypeFor[TaskState]()}
	}
	*s = st
	return nil
}

// Role says who sent a message.
type Role string

// The roles of A2A 1.0.
const (
	RoleUnspecified Role = "ROLE_UNSPECIFIED"
	RoleUser        Role = "ROLE_USER"
	RoleAgent       Role = "ROLE_AGENT"
)

// UnmarshalJSON accepts the enum name or its number.
func (r *Role) UnmarshalJSON(b []byte) error {
	v, err := enumText(b)
	if err != nil {
		return fmt.Errorf("role: %w", err)
	}
	switch v {
	case "0", string(RoleUnspecified):
		*r = RoleUnspecified
	case "1", string(RoleUser):
		*r = RoleUser
	case "2", string(RoleAgent):
		*r = RoleAgent
	default:
		return &json.UnmarshalTypeError{Value: "unknown enum value", Type: reflect.TypeFor[Role]()}
	}
	return nil
}

// enumText returns a JSON string's content or a JSON number's text.
func enumText(b []byte) (string, error) {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return "", err
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return "", fmt.Errorf("expected a string or a number")
	}
	return n.String(), nil
}
