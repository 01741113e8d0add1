package store

import (
	"context"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// LocalBus is the in-process EventBus: each log fans its events out to the
// subscriptions of this process and holds the turn's last events in memory
// for replay (RPC-17). Over an EventStore (NewStoredBus) the events of a
// watched turn (one that had a subscription: only a subscriber learns event
// ids it could resume from) are appended to the task's stored log; a turn
// nobody watched appends only the event that ends it, which keeps the
// task's numbering across turns at one stored row per unwatched turn. Over
// a store whose log other instances follow (SharedEvents, Redis) a turn is
// also watched from the moment it becomes visible to them (Watch: the
// runtime calls it before it first stores the running task), so a
// follower elsewhere finds every event of the turn. A
// subscription from before the turn replays the stored events of earlier
// turns first.
type LocalBus struct {
	es EventStore
}

// NewLocalBus returns the in-process event bus without a stored log: only
// the events of the running turn can be replayed.
func NewLocalBus() LocalBus { return LocalBus{} }

// NewStoredBus returns the in-process event bus over the task event log of
// es.
func NewStoredBus(es EventStore) LocalBus { return LocalBus{es: es} }

var _ EventBus = LocalBus{}

// Open implements EventBus.
func (b LocalBus) Open(taskID string, o LogOptions) (EventLog, context.Context) {
	ctx, cancel := context.WithCancelCause(context.Background())
	keep := o.Keep
	if keep <= 0 {
		keep = DefaultEventLogSize
	}
	l := &localLog{cancel: cancel, es: b.es, taskID: taskID, start: o.After, keep: keep, seq: o.After}
	l.hist = l.histBuf[:0:min(keep, len(l.histBuf))]
	return l, ctx
}

// Watch implements EventLog.
func (l *localLog) Watch() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.watch()
}

// localLog is one turn's in-process log.
type localLog struct {
	cancel context.CancelCauseFunc
	es     EventStore
	taskID string
	start  uint64 // the task's last event before the turn
	keep   int

	mu      sync.Mutex
	seq     uint64
	hist    []Event                // the turn's last events, at most keep
	histBuf [8]Event               // hist's first array: a quick turn's events fit (issue 29)
	subs    map[*localSub]struct{} // made by the first Subscribe
	closed  bool
	watched bool // a subscription was made: every event is stored
}

func (l *localLog) Publish(ev a2a.StreamResponse) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.seq
	}
	l.seq++
	e := Event{Seq: l.seq, Response: ev}
	if len(l.hist) >= l.keep {
		n := copy(l.hist, l.hist[1:])
		l.hist = l.hist[:n]
	}
	l.hist = append(l.hist, e)
	if l.es != nil && (l.watched || endsTurn(ev)) {
		// Stored with the task's next write (SQLite); a failure leaves a
		// gap a resuming stream sees as ErrEventsGone (a snapshot).
		_ = l.es.AppendEvents(l.taskID, []Event{e}, l.keep)
	}
	for s := range l.subs {
		s.push(e)
	}
	return l.seq
}

// watch makes the turn watched: the events held so far and every later one
// go to the stored log. If the turn already dropped events from hist, the
// stored log of the task is then hist alone (pruning to keep removes the
// older ones), still without a gap. l.mu is held.
func (l *localLog) watch() {
	if l.watched {
		return
	}
	l.watched = true
	if l.es == nil || len(l.hist) == 0 {
		return
	}
	var unstored []Event
	for _, e := range l.hist {
		if !endsTurn(e.Response) {
			unstored = append(unstored, e)
		}
	}
	if len(unstored) > 0 {
		_ = l.es.AppendEvents(l.taskID, unstored, l.keep)
	}
}

// endsTurn reports whether ev is the status update that ends a turn
// (input-required, auth-required or terminal): the one event an unwatched
// turn stores.
func endsTurn(ev a2a.StreamResponse) bool {
	su := ev.StatusUpdate
	return su != nil && (su.Status.State.Terminal() || su.Status.State.Interrupted())
}

func (l *localLog) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

func (l *localLog) Subscribe(after uint64) (Subscription, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	replay, err := l.replay(after)
	if err != nil {
		return nil, err
	}
	l.watch()
	s := &localSub{notify: make(chan struct{}, 1), log: l, queue: replay}
	if l.closed {
		s.closed = true
	} else {
		if l.subs == nil {
			l.subs = map[*localSub]struct{}{}
		}
		l.subs[s] = struct{}{}
	}
	return s, nil
}

// replay returns the held events after after; l.mu is held.
func (l *localLog) replay(after uint64) ([]Event, error) {
	switch {
	case after == l.seq:
		return nil, nil
	case after > l.seq:
		return nil, ErrEventsGone
	case len(l.hist) > 0 && l.hist[0].Seq <= after+1:
		return append([]Event(nil), l.hist[after+1-l.hist[0].Seq:]...), nil
	case after >= l.start || l.es == nil || (len(l.hist) > 0 && l.hist[0].Seq != l.start+1):
		// Older than the turn's held events, or than the turn itself
		// without a stored log.
		return nil, ErrEventsGone
	}
	stored, err := l.es.Events(context.Background(), l.taskID, after)
	if err != nil {
		return nil, ErrEventsGone
	}
	out := make([]Event, 0, len(stored)+len(l.hist))
	for _, ev := range stored {
		if ev.Seq > l.start {
			break // this turn's events come from hist
		}
		out = append(out, ev)
	}
	if len(out) == 0 || out[len(out)-1].Seq != l.start {
		return nil, ErrEventsGone
	}
	return append(out, l.hist...), nil
}

func (l *localLog) Cancel(cause error) { l.cancel(cause) }

func (l *localLog) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for s := range l.subs {
		s.end(false)
	}
	l.subs = nil
}

func (l *localLog) unsubscribe(s *localSub) {
	l.mu.Lock()
	delete(l.subs, s)
	l.mu.Unlock()
}

// Buffered is part of every Subscription, and implemented by an
// agent.Stream that can tell whether Next would wait, and be waited on
// without Next: the one definition the store, the agent's streams and the
// bindings' pumps share.
type Buffered interface {
	// Buffered reports whether Next would return without waiting: an
	// event is queued (or at hand), or the subscription has ended.
	Buffered() bool
	// Ready returns a channel that receives after the subscription
	// changed (an event queued, or its end); Buffered tells what changed,
	// and may still be false (a change Next has already consumed). Nil
	// when the stream must be waited on in Next.
	Ready() <-chan struct{}
}

var _ Buffered = (*localSub)(nil)

// localSub is one subscription's ordered queue, bounded at MaxQueuedEvents
// (the events replayed when it starts count too).
type localSub struct {
	log    *localLog
	notify chan struct{}

	mu     sync.Mutex
	queue  []Event
	closed bool
}

func (s *localSub) push(ev Event) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= MaxQueuedEvents {
		s.queue, s.closed = nil, true
	} else {
		s.queue = append(s.queue, ev)
	}
	s.mu.Unlock()
	s.wake()
}

// end marks the subscription ended; drop also discards the queued events.
func (s *localSub) end(drop bool) {
	s.mu.Lock()
	s.closed = true
	if drop {
		s.queue = nil
	}
	s.mu.Unlock()
	s.wake()
}

func (s *localSub) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Buffered implements Buffered.
func (s *localSub) Buffered() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue) > 0 || s.closed
}

// Ready implements Buffered.
func (s *localSub) Ready() <-chan struct{} { return s.notify }

func (s *localSub) Next(ctx context.Context) (Event, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = Event{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return Event{}, false
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return Event{}, false
		}
	}
}

func (s *localSub) Close() {
	s.log.unsubscribe(s)
	s.end(true)
}
