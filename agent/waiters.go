package agent

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// waiter is a SubscribeToTask stream on a task no turn is running for (an
// input-required or auth-required task, RPC-11). It has no goroutine of its
// own: the next run of the task adopts it when it starts, before the turn
// emits anything, subscribing it to the turn's event log, so the stream gets
// every event of that turn and ends with it.
type waiter struct {
	id, owner string
	// wake is closed once a run adopted the waiter or the hub released it.
	wake chan struct{}

	// Guarded by waitList.mu.
	run  *run               // the run that adopted the waiter; nil while it waits
	base a2a.Task           // that run's task when it adopted the waiter
	sub  store.Subscription // the waiter's subscription to that run's events
}

// waitList holds the waiters of every task, keyed by task id. Its lock also
// orders a subscriber's look for a live run against a run's adoption of the
// waiters, so a follow-up that starts while a subscriber registers is never
// missed: either the subscriber sees the run, or the run sees the waiter.
type waitList struct {
	mu     sync.Mutex
	byTask map[string]map[*waiter]struct{}
	closed bool // the hub stopped accepting turns: no run can adopt a waiter
}

// subscribeOrWait subscribes to the live run of task id or, when none is
// live, registers a waiter for it. With a live run whose final state is
// already decided it returns that run and no subscriber: the caller waits
// for its done and tries again. w is nil (and so is sub) when the hub is
// shutting down. A live run of another owner is TaskNotFound.
func (h *Hub) subscribeOrWait(id, owner string) (r *run, first a2a.Task, sub store.Subscription, w *waiter, err error) {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := h.runs.Load(id); ok {
		r = v.(*run)
		if r.owner != owner {
			return nil, first, nil, nil, a2a.ErrTaskNotFound(id)
		}
		first, sub, _ = r.subscribeLive()
		return r, first, sub, nil, nil
	}
	if l.closed {
		return nil, first, nil, nil, nil
	}
	w = &waiter{id: id, owner: owner, wake: make(chan struct{})}
	if l.byTask == nil {
		l.byTask = map[string]map[*waiter]struct{}{}
	}
	set := l.byTask[id]
	if set == nil {
		set = map[*waiter]struct{}{}
		l.byTask[id] = set
	}
	set[w] = struct{}{}
	return nil, first, nil, w, nil
}

// adopt hands every waiter of r's task (of r's owner) to r: from now on they
// receive r's events and end when r finishes. The caller holds the task id
// in Hub.runs and calls adopt before the turn publishes anything.
func (h *Hub) adopt(r *run) {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	id, _ := r.ids()
	set := l.byTask[id]
	if len(set) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	for w := range set {
		if w.owner != r.owner {
			continue // another principal's subscription to the same id never sees this task
		}
		w.run, w.base, w.sub = r, cloneTask(&r.task), r.subscribeLocked()
		close(w.wake)
		delete(set, w)
	}
	if len(set) == 0 {
		delete(l.byTask, id)
	}
}

// unwait removes w if it still waits; else it returns the run that adopted
// it.
func (h *Hub) unwait(w *waiter) *run {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.run != nil {
		return w.run
	}
	if set := l.byTask[w.id]; set != nil {
		delete(set, w)
		if len(set) == 0 {
			delete(l.byTask, w.id)
		}
	}
	return nil
}

// adoption returns the run that adopted w (nil while it waits) and the
// task that run had then.
func (h *Hub) adoption(w *waiter) (*run, a2a.Task) {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.run, w.base
}

// adoptedSub returns w's subscription to the run that adopted it (nil while
// it waits).
func (h *Hub) adoptedSub(w *waiter) store.Subscription {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.sub
}

// releaseWaiters ends every waiting stream and registers no new waiter: the
// hub takes no new turns, so none could be adopted (OPS-3).
func (h *Hub) releaseWaiters() {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for _, set := range l.byTask {
		for w := range set {
			close(w.wake)
		}
	}
	l.byTask = nil
}

// waiters returns how many streams wait for a task to move on.
func (h *Hub) waiters() int {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, set := range l.byTask {
		n += len(set)
	}
	return n
}

// subscribeWaiting opens the stream of a waiter just registered (RPC-11). It
// reads the stored task only now, after registering: a run that adopted the
// waiter meanwhile is the stream's start instead (its task as adopted, then
// all its events), so the first event and the later ones always agree.
func (s *Service) subscribeWaiting(ctx context.Context, w *waiter) (Stream, error) {
	t, err := s.st.GetTask(ctx, w.owner, w.id)
	if r, base := s.hub.adoption(w); r != nil {
		first := s.trimTask(base, nil, true)
		return &waitStream{svc: s, w: w, first: &first, sub: s.hub.adoptedSub(w)}, nil
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = a2a.ErrTaskNotFound(w.id)
	case err != nil:
		s.cfg.Logger.Error("reading task", errField(err))
		err = a2a.ErrInternal()
	case t.Status.State.Terminal():
		err = a2a.ErrUnsupportedOperation("Task is in a terminal state and cannot be subscribed to")
	}
	if err != nil {
		if r := s.hub.unwait(w); r != nil {
			// Adopted between the two looks: that run's stream it is.
			_, base := s.hub.adoption(w)
			first := s.trimTask(base, nil, true)
			return &waitStream{svc: s, w: w, first: &first, sub: s.hub.adoptedSub(w)}, nil
		}
		return nil, err
	}
	first := s.trimTask(*t, nil, true)
	return &waitStream{svc: s, w: w, first: &first, idleAt: time.Now().Add(s.cfg.SubscribeIdleTimeout)}, nil
}

// waitStream is a SubscribeToTask stream on an interrupted task (RPC-11):
// the Task, then every event of the next turn of the task, ending with that
// turn. When no turn starts within SubscribeIdleTimeout, or the hub stops
// taking turns, it ends after a final Task snapshot instead.
type waitStream struct {
	svc    *Service
	w      *waiter
	first  *a2a.Task
	idleAt time.Time
	// sub is set once a run took the waiter: no idle deadline any more.
	sub   store.Subscription
	ended bool
}

// Next implements Stream.
func (ws *waitStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	if ws.first != nil {
		t := ws.first
		ws.first = nil
		return a2a.StreamResponse{Task: t}, true
	}
	for !ws.ended {
		if ws.sub == nil && !ws.await(ctx) {
			if ctx.Err() != nil {
				return a2a.StreamResponse{}, false // the caller's wait is over
			}
			return ws.final(ctx)
		}
		ev, ok := ws.sub.Next(ctx)
		switch {
		case ok:
			return ev.Response, true
		case ctx.Err() != nil:
			return a2a.StreamResponse{}, false // the caller's wait is over
		default:
			ws.ended = true // the adopting run finished and every event was taken
		}
	}
	return a2a.StreamResponse{}, false
}

// await waits for a run to adopt the waiter and sets ws.sub. It is false
// when ctx ends, the idle timeout passes first, or the hub released the
// waiter at shutdown.
func (ws *waitStream) await(ctx context.Context) bool {
	hub := ws.svc.hub
	t := time.NewTimer(time.Until(ws.idleAt))
	defer t.Stop()
	select {
	case <-ws.w.wake:
		// Adopted, or released by the hub's shutdown.
		if r, _ := hub.adoption(ws.w); r != nil && ctx.Err() == nil {
			ws.sub = hub.adoptedSub(ws.w)
			return true
		}
		return false
	case <-t.C:
		// The idle timeout: stop waiting, unless a run just took us.
		if r := hub.unwait(ws.w); r != nil && ctx.Err() == nil {
			ws.sub = hub.adoptedSub(ws.w)
			return true
		}
		return false
	case <-ctx.Done():
		return false
	}
}

// final ends the stream with the task's current snapshot (none when it
// cannot be read, e.g. the store is already closed at shutdown).
func (ws *waitStream) final(ctx context.Context) (a2a.StreamResponse, bool) {
	ws.ended = true
	var t a2a.Task
	if v, ok := ws.svc.hub.runs.Load(ws.w.id); ok && v.(*run).owner == ws.w.owner {
		t = v.(*run).snapshot()
	} else {
		st, err := ws.svc.st.GetTask(context.WithoutCancel(ctx), ws.w.owner, ws.w.id)
		if err != nil {
			return a2a.StreamResponse{}, false
		}
		t = *st
	}
	t = ws.svc.trimTask(t, nil, true)
	return a2a.StreamResponse{Task: &t}, true
}

// Close implements Stream: a waiting stream leaves the task's wait list, an
// adopted one its run's subscribers. The task is not affected.
func (ws *waitStream) Close() {
	if r := ws.svc.hub.unwait(ws.w); r != nil {
		r.unsubscribe(ws.svc.hub.adoptedSub(ws.w))
	}
}
