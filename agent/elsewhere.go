package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"go.uber.org/zap"
)

// Turns running on another instance (SCALE-1), over a store that shares
// its event log (store.SharedEvents, Redis): a SubscribeToTask here follows
// the turn's events in the shared log, and a CancelTask here asks the
// instance running the turn to cancel it and waits for the stored result.

// shared returns the hub's store as a shared event log, nil when it is
// not one (SQLite) or not open yet.
func (h *Hub) shared() store.SharedEvents { return h.caps().Shared }

// runningState reports whether a stored task's turn is in progress
// (somewhere).
func runningState(s a2a.TaskState) bool {
	return s == a2a.TaskStateSubmitted || s == a2a.TaskStateWorking
}

// turnEnd reports whether ev is the status update that ends a turn
// (terminal or interrupted).
func turnEnd(ev a2a.StreamResponse) bool {
	su := ev.StatusUpdate
	return su != nil && (su.Status.State.Terminal() || su.Status.State.Interrupted())
}

// cancelListener acts on the cancels other instances send (SCALE-1): the
// turn of the task, when it runs here, is canceled like a local CancelTask
// cancels it (it ends CANCELED). It ends with the hub.
func (h *Hub) cancelListener() {
	defer h.stopped.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-h.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if h.src.Wait(ctx) != nil { // a deferred store opens at the app's Start
		return
	}
	se := h.shared()
	if se == nil {
		return
	}
	for ctx.Err() == nil {
		reqs, err := se.CancelRequests(ctx)
		switch {
		case errors.Is(err, store.ErrClosed), ctx.Err() != nil:
			return
		case err == nil:
			for id := range reqs {
				h.cancelHere(id)
			}
		}
		// The listener lost Redis (or never got it): try again.
		t := time.NewTimer(time.Second)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

// cancelHere cancels the turn of task id if it runs on this instance. The
// sender checked the task's owner.
func (h *Hub) cancelHere(id string) {
	v, ok := h.runs.Load(id)
	if !ok {
		return
	}
	r := v.(*run)
	r.mu.Lock()
	if r.finalized || r.finished {
		r.mu.Unlock()
		return
	}
	r.canceling = true
	r.mu.Unlock()
	r.cancel(errCanceledByClient)
}

// cancelPoll is how often CancelTask rereads a task whose turn it asked
// another instance to cancel.
const cancelPoll = 20 * time.Millisecond

// cancelElsewhere asks the instance running t's turn to cancel it and
// waits, up to CancelDrain, for the stored task to leave SUBMITTED/WORKING.
// It returns the task as last read (CANCELED when that instance ended
// it). Without a shared store, or for a task at rest, it returns t.
func (s *Service) cancelElsewhere(ctx context.Context, owner string, t *a2a.Task) (*a2a.Task, error) {
	se := s.hub.shared()
	if se == nil || !runningState(t.Status.State) {
		return t, nil
	}
	if err := se.PublishCancel(ctx, t.ID); err != nil {
		s.cfg.Logger.Warn("sending a cancel to the other instances", errField(err), zap.String("task_id", t.ID))
		return t, nil
	}
	deadline := time.Now().Add(s.cfg.CancelDrain)
	tick := time.NewTicker(cancelPoll)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		cur, err := s.st.GetTask(ctx, owner, t.ID)
		if err != nil {
			continue
		}
		t = cur
		if !runningState(t.Status.State) {
			return t, nil
		}
	}
	// No instance stopped it in time (none runs it, or its backend ignores
	// the cancel): the caller stores CANCELED itself.
	return t, nil
}

// followElsewhere is the SubscribeToTask stream of a task whose turn runs
// on another instance (RPC-11 across instances): the Task (or, resumed,
// the logged events after after, RPC-17), then every event of the turn
// from the shared log as it is appended, ending with the turn's last one.
// For an interrupted task it is the RPC-11 wait: every event of the next
// turn, wherever it runs, or after SubscribeIdleTimeout without one (or
// when the hub stops taking turns) a final Task.
func (s *Service) followElsewhere(ctx context.Context, se store.SharedEvents, owner, id string, after *uint64) (Stream, error) {
	// The log position first, then the task: the snapshot reflects at
	// least the events up to last, and the follower takes the rest.
	last := s.lastSeq(ctx, id)
	t, err := s.loadTask(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	fs := &followStream{svc: s, owner: owner, id: id, seq: last, lastEvent: time.Now(), lastCheck: time.Now()}
	replayed := false
	if after != nil {
		fs.replay, replayed = s.storedReplay(ctx, id, *after, last)
	}
	if !replayed {
		snap := s.trimTask(*t, nil, true)
		fs.first = &snap
	}
	switch {
	case t.Status.State.Interrupted():
		// RPC-11: wait for the next turn, on any instance.
		fs.waiting = true
	case !runningState(t.Status.State):
		fs.ended = true // the turn ended meanwhile: what was read, then the end
		return fs, nil
	}
	sub, err := se.LiveEvents(ctx, id, last)
	if err != nil {
		s.cfg.Logger.Error("following task events", errField(err), zap.String("task_id", id))
		return nil, a2a.ErrInternal()
	}
	fs.sub = sub
	return fs, nil
}

// followCheck is how often a follower without events rereads the stored
// task: a turn whose last event the log missed (or whose instance died)
// does not hold the stream open.
const followCheck = 5 * time.Second

// followStep bounds one wait of a follower for an event: how late it
// notices that the hub stops taking turns (OPS-3), when it ends after a
// final Task like a waiting stream.
const followStep = time.Second

// followStream follows a turn running on another instance.
type followStream struct {
	svc       *Service
	owner, id string
	first     *a2a.Task
	replay    []store.Event
	sub       store.Subscription
	ended     bool
	seq       uint64
	lastEvent time.Time // when the last event came (the idle timeout)
	lastCheck time.Time // when the stored task was last reread
	// waiting: the task is at rest (input-required, auth-required) and
	// the stream waits for its next turn, on any instance (RPC-11).
	waiting bool
}

// Seq implements Stream.
func (fs *followStream) Seq() uint64 { return fs.seq }

// Next implements Stream.
func (fs *followStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	if fs.first != nil {
		t := fs.first
		fs.first = nil
		return a2a.StreamResponse{Task: t}, true
	}
	if len(fs.replay) > 0 {
		ev := fs.replay[0]
		fs.replay, fs.seq = fs.replay[1:], ev.Seq
		return ev.Response, true
	}
	for !fs.ended && fs.sub != nil {
		wctx, cancel := context.WithTimeout(ctx, followStep)
		ev, ok := fs.sub.Next(wctx)
		timedOut := wctx.Err() != nil
		cancel()
		switch {
		case ok:
			fs.seq, fs.lastEvent, fs.waiting = ev.Seq, time.Now(), false
			if turnEnd(ev.Response) {
				fs.ended = true
			}
			return ev.Response, true
		case ctx.Err() != nil:
			return a2a.StreamResponse{}, false
		case !timedOut:
			return fs.final(ctx) // the follower ended (the store closed, Redis gone)
		}
		if fs.svc.hub.Closing() {
			return fs.final(ctx)
		}
		if time.Since(fs.lastCheck) < followCheck {
			continue
		}
		fs.lastCheck = time.Now()
		t, err := fs.svc.st.GetTask(ctx, fs.owner, fs.id)
		if err != nil || (!fs.waiting && !runningState(t.Status.State)) || t.Status.State.Terminal() || time.Since(fs.lastEvent) >= fs.svc.cfg.SubscribeIdleTimeout {
			return fs.final(ctx)
		}
	}
	return a2a.StreamResponse{}, false
}

// final ends the stream with the stored task (nothing when it cannot be
// read).
func (fs *followStream) final(ctx context.Context) (a2a.StreamResponse, bool) {
	fs.ended = true
	t, err := fs.svc.st.GetTask(context.WithoutCancel(ctx), fs.owner, fs.id)
	if err != nil {
		return a2a.StreamResponse{}, false
	}
	snap := fs.svc.trimTask(*t, nil, true)
	fs.seq = fs.svc.lastSeq(context.WithoutCancel(ctx), fs.id)
	return a2a.StreamResponse{Task: &snap}, true
}

// Close implements Stream: the follower stops; the turn is not affected.
func (fs *followStream) Close() {
	if fs.sub != nil {
		fs.sub.Close()
	}
}

// Detach implements Stream.
func (fs *followStream) Detach() { fs.Close() }

// Buffered implements Stream: a followed stream cannot tell.
func (fs *followStream) Buffered() bool { return false }

// Ready implements Stream: a followed stream is waited on in Next.
func (fs *followStream) Ready() <-chan struct{} { return nil }

// cancelSealed stores t CANCELED with store.SharedEvents.PutFinalIfRunning
// (SCALE-1): only over a task still running, and final — the late writes
// of its turn, on the instance that did not stop it, are refused. When the
// turn ended first, the task as it ended is reported (not cancelable once
// terminal).
func (s *Service) cancelSealed(ctx context.Context, owner string, t a2a.Task, guard *run, se store.SharedEvents) (a2a.Task, error) {
	t, ev := canceledState(t)
	payload, err := json.Marshal(ev)
	if err != nil {
		return a2a.Task{}, a2a.ErrInternal()
	}
	n, err := se.PutFinalIfRunning(context.WithoutCancel(ctx), owner, &t, payload)
	switch {
	case errors.Is(err, store.ErrTaskReaped):
		cur, lerr := s.loadTask(ctx, owner, t.ID)
		if lerr != nil {
			return a2a.Task{}, lerr
		}
		if cur.Status.State == a2a.TaskStateCanceled {
			return *cur, nil // canceled meanwhile (by its turn or another cancel): idempotent
		}
		if cur.Status.State.Terminal() {
			return a2a.Task{}, errNotCancelable(*cur)
		}
		return s.finalizeCanceled(ctx, owner, *cur, guard), nil // it came to rest meanwhile
	case err != nil:
		s.cfg.Logger.Error("storing canceled task", errField(err))
		return a2a.Task{}, a2a.ErrInternal()
	}
	if _, ok := s.pushStore(); ok {
		s.cfg.Push.Enqueued(n)
	}
	guard.mu.Lock()
	guard.finalized = true
	guard.mu.Unlock()
	final := t
	guard.publishFinal(ev, func(gt *a2a.Task) { *gt = cloneTask(&final) })
	s.cfg.Metrics.transition(s.cfg.AgentName, t.Status.State)
	return t, nil
}
