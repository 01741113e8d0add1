package agent

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// start validates a message, creates (or continues) its task, stores it
// SUBMITTED, subscribes the caller and launches the turn. A message the
// caller already sent, on a call that deduplicates (RPC-18, idempotent),
// launches nothing: prior is its first send.
//
// durable says whether the SUBMITTED task must be stored before start
// returns: true when the caller learns the task id before the turn ends
// (streaming, returnImmediately, an inline push config). Otherwise the task
// is written lazily: only if the turn is still running after
// lazyWriteDelay, and in any case durably when it ends.
func (s *Service) start(ctx context.Context, owner string, call Call, req *a2a.SendMessageRequest, durable bool) (_ *run, _ a2a.Task, _ store.Subscription, prior *store.SentMessage, err error) {
	var zero a2a.Task
	msg, pushCfg, err := s.checkSend(ctx, req)
	if err != nil {
		return nil, zero, nil, nil, err
	}
	// A resent messageId starts no second turn when the call deduplicates
	// (RPC-18); the claim is forgotten when this send fails before its
	// turn starts. A plain A2A 1.0 send claims nothing.
	newTaskID := ""
	if msg.TaskID == "" {
		newTaskID = newID()
	}
	prior, release, err := s.claimSend(ctx, s.idempotent(call), owner, msg, cmp.Or(msg.TaskID, newTaskID))
	if err != nil || prior != nil {
		return nil, zero, nil, prior, err
	}
	defer func() {
		if err != nil {
			release()
		}
	}()
	var cont *a2a.Task
	ctxID := msg.ContextID
	if msg.TaskID != "" {
		t, err := s.continuable(ctx, owner, msg)
		if err != nil {
			return nil, zero, nil, nil, err
		}
		cont, ctxID = t, t.ContextID
	}
	// The workspace follows the context (INPUT-1): a message without a cwd
	// runs in the one its context is bound to.
	bound, isBound := s.boundCwd(ctx, owner, ctxID)
	in, err := s.prepareInput(ctx, req.Message, bound, isBound)
	if err != nil {
		return nil, zero, nil, nil, err
	}
	in.baseURL = call.BaseURL
	if cont != nil && (in.badCwd || in.otherCwd) {
		// Continuing a task in another (or an unacceptable) workspace is
		// refused before the task is touched: it stays as it was (RPC-6).
		return nil, zero, nil, nil, workspaceError(s.cfg.Namespace, in.otherCwd)
	}
	in.newContext = cont == nil && msg.ContextID == ""
	task := newTurnTask(cont, msg, newTaskID)
	r, first, sub, err := s.launch(ctx, owner, task, msg, in, pushCfg, durable)
	return r, first, sub, nil, err
}

// checkSend validates a SendMessage request before anything is touched and
// returns its message (a copy without sensitive metadata, AUTH-5) and its
// inline push config.
func (s *Service) checkSend(ctx context.Context, req *a2a.SendMessageRequest) (*a2a.Message, *a2a.TaskPushNotificationConfig, error) {
	if req == nil || req.Message == nil {
		return nil, nil, a2a.ErrInvalidParams("message", "is required")
	}
	if err := validateMessage(req.Message); err != nil {
		return nil, nil, err
	}
	if req.Configuration != nil && !acceptsOutput(req.Configuration.AcceptedOutputModes, s.cfg.OutputModes) {
		return nil, nil, &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "None of the accepted output modes can be produced; this agent produces " + strings.Join(s.cfg.OutputModes, ", ")}
	}
	var pushCfg *a2a.TaskPushNotificationConfig
	if req.Configuration != nil && req.Configuration.TaskPushNotificationConfig != nil {
		if !s.pushEnabled() {
			return nil, nil, ErrPushNotSupported()
		}
		pushCfg = req.Configuration.TaskPushNotificationConfig
		if err := s.validatePushConfig(ctx, pushCfg, pushInlinePrefix); err != nil {
			return nil, nil, err
		}
	}
	msg := stripSensitive(req.Message, s.cfg.Namespace, s.cfg.SensitiveMetadataKeys)
	if msg == req.Message {
		c := *msg
		msg = &c
	}
	return msg, pushCfg, nil
}

// newTurnTask returns the SUBMITTED task of a turn for msg: cont (the task
// msg continues) with msg appended, or a new task newTaskID (and context).
func newTurnTask(cont *a2a.Task, msg *a2a.Message, newTaskID string) a2a.Task {
	now := a2a.Timestamp(time.Now())
	var task a2a.Task
	if cont != nil {
		task = *cont
		msg.ContextID = task.ContextID
		task.History = append(task.History, *msg)
	} else {
		ctxID := msg.ContextID
		if ctxID == "" {
			ctxID = newID()
		}
		msg.ContextID = ctxID
		msg.TaskID = newTaskID
		task = a2a.Task{ID: msg.TaskID, ContextID: ctxID, History: []a2a.Message{*msg}}
	}
	task.Status = a2a.TaskStatus{State: a2a.TaskStateSubmitted, Timestamp: now}
	return task
}

// launch registers the run of task, stores what must be stored before the
// caller hears of the task, subscribes the caller and starts the turn.
func (s *Service) launch(ctx context.Context, owner string, task a2a.Task, msg *a2a.Message, in *turnInput, pushCfg *a2a.TaskPushNotificationConfig, durable bool) (*run, a2a.Task, store.Subscription, error) {
	var zero a2a.Task
	if s.hub.Closing() {
		return nil, zero, nil, a2a.NewError(a2a.CodeInternalError, "The gateway is shutting down; retry shortly")
	}
	r, runCtx, err := s.hub.newRun(ctx, owner, &task, s.cfg.EventLogSize, len(task.History) <= 1)
	if err != nil {
		s.cfg.Logger.Error("reading task event log", errField(err))
		return nil, zero, nil, a2a.ErrInternal()
	}
	r.agent = s.cfg.AgentName
	r.release = turnRelease(ctx)
	r.trace = traceOf(ctx)
	if _, loaded := s.hub.runs.LoadOrStore(task.ID, r); loaded {
		r.cancel(nil)
		r.log.Close()
		return nil, zero, nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msgAlreadyWorking}
	}
	if msg.TaskID != "" && len(task.History) > 1 {
		if err := s.refreshFollowUp(ctx, owner, r, &task, msg); err != nil {
			return nil, zero, nil, err
		}
	}
	followUp := len(task.History) > 1
	if pushCfg != nil && followUp {
		// A follow-up's task already has configs: a config refused by the
		// cap (PUSH-1) must leave the task as it was, so it is stored first.
		ps, _ := s.pushStore()
		if _, err := s.savePushConfig(ctx, ps, owner, task.ID, pushCfg, pushInlinePrefix); err != nil {
			s.hub.runs.Delete(task.ID)
			r.finish() // a stream that subscribed meanwhile ends (RPC-11)
			r.cancel(nil)
			return nil, zero, nil, err
		}
	}
	if durable || pushCfg != nil {
		if err := s.st.PutTask(ctx, owner, &task); err != nil {
			s.hub.runs.Delete(task.ID)
			r.finish()
			r.cancel(nil)
			s.cfg.Logger.Error("storing submitted task", errField(err))
			return nil, zero, nil, a2a.ErrInternal()
		}
	}
	if pushCfg != nil && !followUp {
		// Stored before the turn starts, so its first state change is seen (PUSH-1).
		ps, _ := s.pushStore()
		if _, err := s.savePushConfig(ctx, ps, owner, task.ID, pushCfg, pushInlinePrefix); err != nil {
			s.hub.runs.Delete(task.ID)
			r.finish()
			r.cancel(nil)
			return nil, zero, nil, err
		}
	}
	s.cfg.Metrics.transition(s.cfg.AgentName, a2a.TaskStateSubmitted)
	// A caller that learns of the task before the turn ends (a stream,
	// returnImmediately, push) subscribes; a blocking SendMessage only
	// waits for the end, so it does not: a turn nobody watches stores only
	// its final event in the task's log (RPC-17, see store.LocalBus).
	var first a2a.Task
	var sub store.Subscription
	if durable || pushCfg != nil {
		first, _, sub = r.subscribe()
	} else {
		first = r.snapshot()
	}
	// Streams waiting on the task (RPC-11) get every event of this turn.
	s.hub.adopt(r)
	r.durable = durable || pushCfg != nil
	if !r.durable {
		// A durable run writes WORKING at once (runTurn): no timer.
		r.lazy = time.AfterFunc(lazyWriteDelay, func() { s.lazyWrite(r) })
	}
	go s.execute(runCtx, r, msg, in)
	return r, first, sub, nil
}

// refreshFollowUp re-reads the task of a follow-up whose run holds the task
// id now: a cancel may have stored a terminal state meanwhile (the run is
// given up, and the error says so), or a turn that just ended may have
// added to the history since it was first read (task and the run's
// snapshot get it).
func (s *Service) refreshFollowUp(ctx context.Context, owner string, r *run, task *a2a.Task, msg *a2a.Message) error {
	cur, err := s.st.GetTask(ctx, owner, task.ID)
	if err == nil && cur.Status.State.Terminal() {
		s.hub.runs.Delete(task.ID)
		r.finish()
		r.cancel(nil)
		return &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: "Task is " + stateWord(cur.Status.State) + " and accepts no more messages; send a new message in the same context instead", Metadata: map[string]string{"taskId": task.ID}}
	}
	if err == nil {
		task.History = append(cur.History, *msg)
		task.Artifacts = cur.Artifacts
		task.Metadata = cur.Metadata
		r.mu.Lock()
		r.task = *task
		r.mu.Unlock()
	}
	return nil
}

// workspaceError is the answer to a follow-up of an existing task whose
// metadata.<ns>.cwd is unacceptable or differs from its context's
// workspace (INPUT-1, RPC-6). It never echoes a path.
func workspaceError(ns string, other bool) error {
	reason := "invalid workspace: the cwd must be an absolute, existing directory inside an allowed root"
	if other {
		reason = "invalid workspace: the task's context is bound to a different workspace; omit the cwd or send the bound one"
	}
	return a2a.ErrInvalidParams("message.metadata."+ns+".cwd", reason)
}

// continuable loads the task a follow-up message names and checks it may
// take another turn (RPC-1b).
func (s *Service) continuable(ctx context.Context, owner string, msg *a2a.Message) (*a2a.Task, error) {
	if v, ok := s.hub.runs.Load(msg.TaskID); ok {
		r := v.(*run)
		if r.owner != owner {
			return nil, a2a.ErrTaskNotFound(msg.TaskID)
		}
		t := time.NewTimer(s.cfg.ContextWait)
		defer t.Stop()
		select {
		case <-r.done:
		case <-t.C:
			return nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: msgAlreadyWorking, Metadata: map[string]string{"taskId": msg.TaskID}}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	t, err := s.st.GetTask(ctx, owner, msg.TaskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, a2a.ErrTaskNotFound(msg.TaskID)
	}
	if err != nil {
		s.cfg.Logger.Error("reading task", errField(err))
		return nil, a2a.ErrInternal()
	}
	if t, err = s.awaitRemoteTurn(ctx, owner, t); err != nil {
		return nil, err
	}
	if t.Status.State.Terminal() {
		return nil, &a2a.Error{Code: a2a.CodeUnsupportedOperation, Message: "Task is " + stateWord(t.Status.State) + " and accepts no more messages; send a new message in the same context instead", Metadata: map[string]string{"taskId": t.ID}}
	}
	if msg.ContextID != "" && msg.ContextID != t.ContextID {
		return nil, a2a.ErrInvalidParams("message.contextId", "does not match the context of the task")
	}
	return t, nil
}

// lazyWriteDelay is how long a turn runs before its intermediate state is
// stored: quick turns are written once, when they end.
const lazyWriteDelay = 100 * time.Millisecond

// lazyWrite stores the live state of a turn that is still running, so a
// crash leaves a task that the next start marks failed (RPC-12) and
// ListTasks sees it. It never overtakes the final write.
func (s *Service) lazyWrite(r *run) {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	r.mu.Lock()
	if r.finalized {
		r.mu.Unlock()
		return
	}
	snap := cloneTask(&r.task)
	r.mu.Unlock()
	if s.hub.shared() != nil {
		// Other instances see the task from now on: its events too
		// (followers elsewhere read the shared log).
		r.log.Watch()
	}
	var err error
	if nw := s.st.caps().NoWait; nw != nil {
		err = nw.PutTaskNoWait(r.owner, &snap)
	} else {
		err = s.st.PutTask(context.Background(), r.owner, &snap)
	}
	if err != nil {
		s.cfg.Logger.Error("storing running task", errField(err))
	}
}
