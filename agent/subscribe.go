package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// SubscribeToTask streams a task's events (RPC-11): the Task first, then
// every later event. A running task's stream ends with its turn. An
// interrupted (input-required or auth-required) task's stream stays open
// until a follow-up turn of the task ends, carrying all of that turn's
// events; without one within SubscribeIdleTimeout it ends after a final Task
// snapshot. Resumed with Last-Event-ID (RPC-17), the events after it come
// instead of the first Task (which comes only when the log no longer holds
// them), and a terminal task's stream replays them and ends; a call that
// does not activate StreamResumeExtension is never resumed.
func (s *Service) SubscribeToTask(ctx context.Context, call Call, req *a2a.SubscribeToTaskRequest) (Stream, error) {
	call.Info.setTask(req.ID, "")
	owner := s.owner(call.Principal)
	if err := call.scopeTask(&req.Tenant, "id", req.ID); err != nil {
		return nil, err
	}
	after, err := s.resumeAfter(call, req.Metadata)
	if err != nil {
		return nil, err
	}
	for {
		r, first, seq, sub, w, err := s.hub.subscribeOrWait(req.ID, owner, after)
		switch {
		case err != nil:
			return nil, err
		case w != nil:
			return s.subscribeWaiting(ctx, w, after)
		case r == nil:
			// Shutting down: no turn can move the task on any more.
			t, err := s.loadTask(ctx, owner, req.ID)
			if err != nil {
				return nil, err
			}
			if t.Status.State.Terminal() {
				return nil, a2a.ErrUnsupportedOperation("Task is in a terminal state and cannot be subscribed to")
			}
			snap := s.trimTask(*t, nil, true)
			return &runStream{first: &snap, firstSeq: s.lastSeq(ctx, req.ID)}, nil
		case sub == nil:
			// The turn is storing its final state: once it is stored, the
			// task is subscribed to like any stored task.
			select {
			case <-r.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			continue
		}
		rs := &runStream{sub: sub, run: r, firstSeq: seq}
		if first != nil {
			t := s.trimTask(*first, nil, true)
			rs.first = &t
		}
		return rs, nil
	}
}
