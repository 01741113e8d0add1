package rest

import (
	"errors"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// A2A 1.0 §11.5: the status query parameter takes the ProtoJSON name, its
// number and the short form, in any case; anything else is InvalidParams
// naming `status`.
func TestQueryTaskState(t *testing.T) {
	ok := map[string]a2a.TaskState{
		"TASK_STATE_WORKING": a2a.TaskStateWorking, "task_state_working": a2a.TaskStateWorking,
		"2": a2a.TaskStateWorking, "working": a2a.TaskStateWorking, "WORKING": a2a.TaskStateWorking, "Working": a2a.TaskStateWorking,
		"input_required": a2a.TaskStateInputRequired, "input-required": a2a.TaskStateInputRequired, "6": a2a.TaskStateInputRequired,
		"auth-required": a2a.TaskStateAuthRequired, "canceled": a2a.TaskStateCanceled, "rejected": a2a.TaskStateRejected,
	}
	for in, want := range ok {
		if got, err := queryTaskState(in); err != nil || got != want {
			t.Errorf("queryTaskState(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", " ", "bogus", "TASK_STATE_", "task_state_bogus", "99", "-1", "work ing", "cancelled"} {
		_, err := queryTaskState(in)
		var ae *a2a.Error
		if !errors.As(err, &ae) || ae.Code != a2a.CodeInvalidParams || len(ae.Violations) != 1 || ae.Violations[0].Field != "status" {
			t.Errorf("queryTaskState(%q) = %v, want InvalidParams naming status", in, err)
		}
	}
}
