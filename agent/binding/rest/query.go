package rest

import (
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// queryTaskState reads the `status` query parameter of ListTasks (A2A 1.0
// §11.5): the ProtoJSON enum name (TASK_STATE_WORKING), its number (2),
// or the short lower-case form of 1.0.0's §11.5 example (working,
// input_required or input-required); names and short forms in any case.
// Answers always carry the ProtoJSON name (§5.5).
func queryTaskState(v string) (a2a.TaskState, error) {
	if s, err := a2a.ParseTaskState(v); err == nil {
		return s, nil
	}
	name := strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(v), "-", "_"))
	if name != "" && !strings.HasPrefix(name, "TASK_STATE_") {
		name = "TASK_STATE_" + name
	}
	s, err := a2a.ParseTaskState(name)
	if err != nil || name == "" {
		return "", a2a.ErrInvalidParams("status", "is not a task state (e.g. TASK_STATE_WORKING, working or 2)")
	}
	return s, nil
}
