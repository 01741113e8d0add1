package agent

import (
	"context"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// CancelTask cancels a running or input-required task (RPC-10).
func (s *Service) CancelTask(ctx context.Context, call Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	call.Info.setTask(req.ID, "")
	return s.cancelTask(ctx, call, req)
}

// cancelTask is CancelTask past the caller's limits.
func (s *Service) cancelTask(ctx context.Context, call Call, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	owner := s.owner(call.Principal)
	if err := call.scopeTask(&req.Tenant, "id", req.ID); err != nil {
		return nil, err
	}
	wasLive := false
	if v, ok := s.hub.runs.Load(req.ID); ok {
		r := v.(*run)
		if r.owner != owner {
			return nil, a2a.ErrTaskNotFound(req.ID)
		}
		wasLive = true
		if out, answered, err := s.stopLiveRun(ctx, r); answered {
			return out, err
		}
		// The turn is over. If it ended on its own just before the cancel
		// took effect, the task is handled like any stored task below.
	}
	t, err := s.loadTask(ctx, owner, req.ID)
	if err != nil {
		return nil, err
	}
	if !wasLive {
		// A turn running on another instance (SCALE-1): that one cancels it.
		if t, err = s.cancelElsewhere(ctx, owner, t); err != nil {
			return nil, err
		}
	}
	if t.Status.State.Terminal() {
		// This cancel ended the turn, or an earlier one did (the canceled
		// task either way), or the task ended otherwise: not cancelable.
		return s.canceledAgain(*t)
	}
	// Hold the task id while canceling so a follow-up cannot start a turn
	// on it at the same time; if one just did, cancel that turn instead.
	// Streams waiting on the task join the guard and get its CANCELED event.
	guard, _, err := s.hub.newRun(ctx, owner, t, s.cfg.EventLogSize, false)
	if err != nil {
		s.cfg.Logger.Error("reading task event log", errField(err))
		return nil, a2a.ErrInternal()
	}
	guard.agent = s.cfg.AgentName
	if _, busy := s.hub.runs.LoadOrStore(t.ID, guard); busy {
		return s.cancelTask(ctx, call, req)
	}
	s.hub.adopt(guard)
	defer func() {
		s.hub.runs.Delete(t.ID)
		guard.finish()
	}()
	return s.cancelHeld(ctx, owner, t, guard)
}

// stopLiveRun cancels the turn r running on this instance and waits up to
// cancel_drain for it to stop. answered is true when the cancel's answer
// is out or err: the backend did not stop in time (the task is canceled
// anyway, streams get the final event, and the backend's late events are
// dropped) or ctx ended. Otherwise the turn is over and the caller goes on
// with the stored task.
func (s *Service) stopLiveRun(ctx context.Context, r *run) (out *a2a.Task, answered bool, err error) {
	r.mu.Lock()
	r.canceling = true
	r.mu.Unlock()
	r.cancel(errCanceledByClient)
	t := time.NewTimer(s.cfg.CancelDrain)
	defer t.Stop()
	select {
	case <-r.done:
		return nil, false, nil
	case <-t.C:
		snap := s.finalize(r, a2a.TaskStateCanceled, msgCanceled, &turnState{})
		trimmed := s.trimTask(snap, nil, true)
		return &trimmed, true, nil
	case <-ctx.Done():
		return nil, true, ctx.Err()
	}
}

// cancelHeld cancels t while guard holds its task id: t is read again, and
// a task that ended meanwhile is answered by canceledAgain; a turn still
// running on another instance gets a sealed write; otherwise t is stored
// CANCELED and the streams of guard get the final event.
func (s *Service) cancelHeld(ctx context.Context, owner string, t *a2a.Task, guard *run) (*a2a.Task, error) {
	if cur, err := s.st.GetTask(ctx, owner, t.ID); err == nil {
		t = cur
	}
	if t.Status.State.Terminal() {
		return s.canceledAgain(*t)
	}
	if se := s.hub.shared(); se != nil && runningState(t.Status.State) {
		// Its turn runs on another instance that did not stop it within
		// cancel_drain: a sealed write, which that turn cannot overwrite.
		snap, err := s.cancelSealed(ctx, owner, *t, guard, se)
		if err != nil {
			return nil, err
		}
		out := s.trimTask(snap, nil, true)
		return &out, nil
	}
	snap := s.finalizeCanceled(ctx, owner, *t, guard)
	out := s.trimTask(snap, nil, true)
	return &out, nil
}

// canceledAgain answers the cancel of a task already terminal (RPC-10):
// a task already CANCELED is returned as it is — cancel is idempotent
// (A2A 1.0 §3.3.1: multiple cancellation requests have the same effect) —
// and a COMPLETED, FAILED or REJECTED one is TaskNotCancelableError.
func (s *Service) canceledAgain(t a2a.Task) (*a2a.Task, error) {
	if t.Status.State != a2a.TaskStateCanceled {
		return nil, errNotCancelable(t)
	}
	out := s.trimTask(t, nil, true)
	return &out, nil
}

// errNotCancelable is TaskNotCancelableError for the terminal task t.
func errNotCancelable(t a2a.Task) *a2a.Error {
	return &a2a.Error{Code: a2a.CodeTaskNotCancelable, Message: "Task cannot be canceled: it is already " + stateWord(t.Status.State), Metadata: map[string]string{"taskId": t.ID}}
}

// canceledState returns t CANCELED and its status update.
func canceledState(t a2a.Task) (a2a.Task, a2a.StreamResponse) {
	t.Status = a2a.TaskStatus{State: a2a.TaskStateCanceled, Message: agentMessage(t.ContextID, t.ID, "Task canceled."), Timestamp: a2a.Timestamp(time.Now())}
	return t, a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: t.ID, ContextID: t.ContextID, Status: t.Status}}
}

// finalizeCanceled stores t as CANCELED, publishes the CANCELED status
// update to the streams of guard (the run holding the task id) and returns
// the task.
func (s *Service) finalizeCanceled(ctx context.Context, owner string, t a2a.Task, guard *run) a2a.Task {
	t, ev := canceledState(t)
	guard.mu.Lock()
	guard.finalized = true
	guard.mu.Unlock()
	final := t
	guard.publishFinal(ev, func(gt *a2a.Task) { *gt = cloneTask(&final) })
	if err := s.storeFinal(context.WithoutCancel(ctx), owner, &t, ev); err != nil {
		s.cfg.Logger.Error("storing canceled task", errField(err))
	}
	s.cfg.Metrics.transition(s.cfg.AgentName, t.Status.State)
	return t
}
