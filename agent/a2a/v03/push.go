package v03

import (
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// PushPayload03 turns a 1.0 push payload (a StreamResponse JSON) into what
// a 0.3 receiver expects: a 0.3 Task (the 0.3 SDKs POST the task). A status
// update becomes the task with that status, an artifact update the task
// with that artifact. A payload it cannot read is returned as it was.
func PushPayload03(body []byte) []byte {
	var ev a2a.StreamResponse
	if err := json.Unmarshal(body, &ev); err != nil {
		return body
	}
	var t *Task
	switch {
	case ev.Task != nil:
		t = Task03(ev.Task)
	case ev.StatusUpdate != nil:
		u := ev.StatusUpdate
		t = &Task{Kind: KindTask, ID: u.TaskID, ContextID: u.ContextID, Status: Status03(u.Status), Metadata: u.Metadata}
	case ev.ArtifactUpdate != nil:
		u := ev.ArtifactUpdate
		t = &Task{Kind: KindTask, ID: u.TaskID, ContextID: u.ContextID, Status: TaskStatus{State: "working"},
			Artifacts: []Artifact{Artifact03(u.Artifact)}}
	default:
		return body
	}
	b, err := json.Marshal(t)
	if err != nil {
		return body
	}
	return b
}
