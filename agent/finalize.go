package agent

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// finalize stores and publishes the final state of a turn, then ends the
// run. A requested cancel always wins over what the backend said.
func (s *Service) finalize(r *run, state a2a.TaskState, text string, ts *turnState) a2a.Task {
	r.mu.Lock()
	if r.finalized {
		r.mu.Unlock()
		return r.snapshot()
	}
	r.finalized = true
	if r.canceling {
		state, text = a2a.TaskStateCanceled, msgCanceled
	}
	if state == a2a.TaskStateFailed && ts.invalid != "" {
		r.invalidResponse = ts.invalid
	}
	r.mu.Unlock()
	snap := r.snapshot()
	answer := state == a2a.TaskStateInputRequired || state == a2a.TaskStateCompleted
	var msg *a2a.Message
	if text != "" {
		msg = agentMessage(snap.ContextID, snap.ID, text)
	}
	if d := ts.directFor(state, s.cfg.Namespace, snap.ContextID, snap.ID); d != nil {
		msg = d // the reply of a message event (Appendix A)
	}
	if answer && msg != nil {
		// The last WORKING update carries the whole answer as a message of
		// its own (RPC-16: every emitted message has its own id); the final
		// status carries msg, which the history keeps (TURN-6a).
		whole := *msg
		whole.MessageID = newID()
		st := a2a.TaskStatus{State: a2a.TaskStateWorking, Message: &whole, Timestamp: a2a.Timestamp(time.Now())}
		r.publishFinal(a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: st, Metadata: s.finalMD}},
			func(t *a2a.Task) { t.Status = st })
	}
	status := a2a.TaskStatus{State: state, Message: msg, Timestamp: a2a.Timestamp(time.Now())}
	var final a2a.Task
	finalEv := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: snap.ID, ContextID: snap.ContextID, Status: status}}
	r.publishFinal(finalEv, func(t *a2a.Task) {
		t.Status = status
		if answer && msg != nil {
			t.History = append(t.History, *msg)
		}
		final = cloneTask(t)
	})
	// Every state finalize stores ends a turn (input-required, completed,
	// failed, canceled, rejected…): queue push deliveries with it (PUSH-4).
	if r.lazy != nil {
		r.lazy.Stop()
	}
	r.writeMu.Lock()
	r.mu.Lock()
	once := r.storeRefused && !r.durable
	r.mu.Unlock()
	var err error
	// The turn's span context rides along to the push jobs (their traceparent).
	sctx := trace.ContextWithSpanContext(context.Background(), ts.span)
	if !once {
		err = s.storeFinalRetrying(sctx, r.owner, &final, finalEv)
	} else if err = s.storeFinal(sctx, r.owner, &final, finalEv); err != nil {
		// The turn never ran and nobody was told of its task (a blocking
		// send: no stream, no push, no returnImmediately): its caller gets
		// an error at once instead of waiting out the outage.
		s.cfg.Logger.Warn("a turn refused for a store failure was not stored", errField(err), zap.String("task_id", final.ID))
		r.mu.Lock()
		r.unstored = true
		r.mu.Unlock()
	}
	r.writeMu.Unlock()
	if errors.Is(err, store.ErrTaskReaped) {
		final = s.reapedFinal(r, final)
	}
	s.cfg.Metrics.transition(s.cfg.AgentName, final.Status.State)
	s.hub.runs.Delete(snap.ID)
	r.finish()
	return final
}

// publishStatus sets the live status and publishes a status update; a zero
// timestamp is filled in.
func (s *Service) publishStatus(r *run, st a2a.TaskStatus, md map[string]any) {
	if st.Timestamp == "" {
		st.Timestamp = a2a.Timestamp(time.Now())
	}
	r.mu.Lock()
	id, ctxID, prev := r.task.ID, r.task.ContextID, r.task.Status.State
	r.mu.Unlock()
	if prev != st.State {
		s.cfg.Metrics.transition(s.cfg.AgentName, st.State)
	}
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: id, ContextID: ctxID, Status: st, Metadata: md}}
	r.publish(ev, func(t *a2a.Task) { t.Status = st })
}

// quickTurn is how long a turn may take and still be routine: a turn that
// ends COMPLETED or INPUT_REQUIRED sooner logs its "turn" line at debug
// level (the metrics count it either way); a slower one, and every turn
// that ends otherwise (failed, canceled, rejected, auth required), at info.
const quickTurn = time.Second

// turnLogLevel is the level of a turn's "turn" line (see quickTurn).
func turnLogLevel(state a2a.TaskState, elapsed time.Duration) zapcore.Level {
	if elapsed < quickTurn && (state == a2a.TaskStateCompleted || state == a2a.TaskStateInputRequired) {
		return zapcore.DebugLevel
	}
	return zapcore.InfoLevel
}

// logTurn counts a turn's end in the metrics and writes its "turn" line.
func (s *Service) logTurn(r *run, t a2a.Task, started time.Time, corr string, ts *turnState) {
	elapsed := time.Since(started)
	s.cfg.Metrics.turnEnded(s.cfg.AgentName, s.cfg.BackendName, t.Status.State, elapsed)
	ce := s.cfg.Logger.Check(turnLogLevel(t.Status.State, elapsed), "turn")
	if ce == nil {
		return
	}
	fields := []zap.Field{
		zap.String("task_id", t.ID), zap.String("context_id", t.ContextID), zap.String("principal", s.principalOf(r.owner)),
		zap.String("backend", s.cfg.BackendName),
		zap.Duration("duration", elapsed), zap.String("outcome", string(t.Status.State)),
		zap.String("correlation_id", corr),
	}
	if ts.usage != nil {
		fields = append(fields, zap.Int64("input_tokens", ts.usage.InputTokens), zap.Int64("output_tokens", ts.usage.OutputTokens))
	}
	ce.Write(fields...)
}

// finalRetryFor bounds how long a turn retries storing its final state
// while the store is unavailable (a Redis outage). Until the write lands
// the run holds the task — a follow-up waits or is refused as for a
// running turn, a blocking SendMessage waits for its answer — so what a
// caller was told is what is stored once the store is back.
const finalRetryFor = 10 * time.Minute

// finalRetryMax caps the pause between two attempts.
const finalRetryMax = time.Second

// reapedFinal is what a turn reports when its final write was refused
// because another instance's reaper failed the task first (SCALE-2: this
// instance's lease ended, e.g. in a Redis outage longer than
// instance_lease): the stored state, published to the turn's streams as
// one more status update, so that what a caller is told is what is
// stored. When the stored task cannot be read, final is returned as is.
func (s *Service) reapedFinal(r *run, final a2a.Task) a2a.Task {
	stored, err := s.st.GetTask(context.Background(), r.owner, final.ID)
	if err != nil || stored == nil {
		return final
	}
	st := stored.Status
	ev := a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{TaskID: final.ID, ContextID: final.ContextID, Status: st}}
	r.publishFinal(ev, func(t *a2a.Task) { t.Status = st })
	return *stored
}

// storeFinalRetrying stores a turn's final state, retrying with backoff
// (up to finalRetryFor) while the store is unavailable. It returns the
// last error (nil once stored).
func (s *Service) storeFinalRetrying(ctx context.Context, owner string, t *a2a.Task, ev a2a.StreamResponse) error {
	deadline := time.Now().Add(finalRetryFor)
	pause := 50 * time.Millisecond
	for attempt := 1; ; attempt++ {
		err := s.storeFinal(ctx, owner, t, ev)
		if err == nil {
			if attempt > 1 {
				s.cfg.Logger.Info("stored final task state after the store came back", zap.String("task_id", t.ID), zap.Int("attempts", attempt))
			}
			return nil
		}
		if !errors.Is(err, store.ErrUnavailable) || time.Now().After(deadline) {
			s.cfg.Logger.Error("storing final task state", errField(err), zap.String("task_id", t.ID), zap.Int("attempts", attempt))
			return err
		}
		if attempt == 1 {
			s.cfg.Logger.Warn("storing final task state failed; retrying until the store is back", errField(err), zap.String("task_id", t.ID))
		}
		time.Sleep(pause)
		pause = min(2*pause, finalRetryMax)
	}
}
