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
	run     *run               // the run that adopted the waiter; nil while it waits
	base    a2a.Task           // that run's task when it adopted the waiter
	baseSeq uint64             // base's sequence number (RPC-17)
	sub     store.Subscription // the waiter's subscription to that run's events
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
// shutting down. A live run of another owner is TaskNotFound. With after
// (a resumed stream, RPC-17) the subscription replays the events after it
// and first is nil, unless the log no longer holds them.
func (h *Hub) subscribeOrWait(id, owner string, after *uint64) (r *run, first *a2a.Task, seq uint64, sub store.Subscription, w *waiter, err error) {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := h.runs.Load(id); ok {
		r = v.(*run)
		if r.owner != owner {
			return nil, nil, 0, nil, nil, a2a.ErrTaskNotFound(id)
		}
		if after != nil {
			first, seq, sub, _ = r.resumeLive(*after)
			return r, first, seq, sub, nil, nil
		}
		t, seq, sub, ok := r.subscribeLive()
		if ok {
			first = &t
		}
		return r, first, seq, sub, nil, nil
	}
	if l.closed {
		return nil, nil, 0, nil, nil, nil
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
	return nil, nil, 0, nil, w, nil
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
		w.run, w.base = r, cloneTask(&r.task)
		w.baseSeq, w.sub = r.subscribeLocked()
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
// task that run had then, with its sequence number.
func (h *Hub) adoption(w *waiter) (*run, a2a.Task, uint64) {
	l := &h.waiting
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.run, w.base, w.baseSeq
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
// With after (RPC-17) the stored events after it replace the first Task
// (while the log holds them), and a terminal task's stream replays them and
// ends instead of being refused.
func (s *Service) subscribeWaiting(ctx context.Context, w *waiter, after *uint64) (Stream, error) {
	t, err := s.st.GetTask(ctx, w.owner, w.id)
	// Read before looking for an adoption: a run that had not adopted the
	// waiter then had published nothing yet.
	last := s.lastSeq(ctx, w.id)
	var replay []store.Event
	replayed := false
	if after != nil && err == nil {
		replay, replayed = s.storedReplay(ctx, w.id, *after, last)
	}
	if r, _, _ := s.hub.adoption(w); r != nil {
		return s.adoptedStream(ctx, w, after), nil
	}
	if se := s.hub.shared(); se != nil && err == nil && (runningState(t.Status.State) || t.Status.State.Interrupted()) {
		// The turn runs on another instance, or the next one may (SCALE-1):
		// follow the shared log, which every instance writes at once.
		if r := s.hub.unwait(w); r != nil {
			return s.adoptedStream(ctx, w, after), nil
		}
		return s.followElsewhere(ctx, se, w.owner, w.id, after)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		err = a2a.ErrTaskNotFound(w.id)
	case err != nil:
		s.cfg.Logger.Error("reading task", errField(err))
		err = a2a.ErrInternal()
	case t.Status.State.Terminal() && after != nil:
		// A terminal task's log: what the client missed, then the end.
		s.hub.unwait(w)
		if replayed {
			return &runStream{replay: replay}, nil
		}
		snap := s.trimTask(*t, nil, true)
		return &runStream{first: &snap, firstSeq: last}, nil
	case t.Status.State.Terminal():
		err = a2a.ErrUnsupportedOperation("Task is in a terminal state and cannot be subscribed to")
	}
	if err != nil {
		if r := s.hub.unwait(w); r != nil {
			// Adopted between the two looks: that run's stream it is.
			return s.adoptedStream(ctx, w, after), nil
		}
		return nil, err
	}
	ws := &waitStream{svc: s, w: w, idleAt: time.Now().Add(s.cfg.SubscribeIdleTimeout)}
	if replayed {
		ws.replay = replay
	} else {
		first := s.trimTask(*t, nil, true)
		ws.first, ws.seq = &first, last
	}
	return ws, nil
}

// adoptedStream is the stream of a waiter a run adopted before its stream
// started: the run's task as adopted (or, resumed, the stored events after
// after up to it), then all its events.
func (s *Service) adoptedStream(ctx context.Context, w *waiter, after *uint64) Stream {
	_, base, baseSeq := s.hub.adoption(w)
	ws := &waitStream{svc: s, w: w, sub: s.hub.adoptedSub(w)}
	if after != nil {
		if replay, ok := s.storedReplay(ctx, w.id, *after, baseSeq); ok {
			ws.replay = replay
			return ws
		}
	}
	first := s.trimTask(base, nil, true)
	ws.first, ws.seq = &first, baseSeq
	return ws
}

// waitStream is a SubscribeToTask stream on an interrupted task (RPC-11):
// the Task, then every event of the next turn of the task, ending with that
// turn. When no turn starts within SubscribeIdleTimeout, or the hub stops
// taking turns, it ends after a final Task snapshot instead.
type waitStream struct {
	svc    *Service
	w      *waiter
	first  *a2a.Task
	replay []store.Event // stored events to send first (a resumed stream)
	idleAt time.Time
	// sub is set once a run took the waiter: no idle deadline any more.
	sub   store.Subscription
	ended bool
	seq   uint64 // of the event Next returned last (first's until then)
}

// Seq implements Stream.
func (ws *waitStream) Seq() uint64 { return ws.seq }

// Next implements Stream.
func (ws *waitStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	if ws.first != nil {
		t := ws.first
		ws.first = nil
		return a2a.StreamResponse{Task: t}, true
	}
	if len(ws.replay) > 0 {
		ev := ws.replay[0]
		ws.replay, ws.seq = ws.replay[1:], ev.Seq
		return ev.Response, true
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
			ws.seq = ev.Seq
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
		if r, _, _ := hub.adoption(ws.w); r != nil && ctx.Err() == nil {
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
		r := v.(*run)
		r.mu.Lock()
		t, ws.seq = cloneTask(&r.task), r.log.Last()
		r.mu.Unlock()
	} else {
		st, err := ws.svc.st.GetTask(context.WithoutCancel(ctx), ws.w.owner, ws.w.id)
		if err != nil {
			return a2a.StreamResponse{}, false
		}
		t, ws.seq = *st, ws.svc.lastSeq(context.WithoutCancel(ctx), ws.w.id)
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
