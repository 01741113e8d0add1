package store

import (
	"context"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// LocalBus is the in-process EventBus: each log fans its events out to the
// subscriptions of this process, keeps no history and forgets everything
// when it closes (its sequence numbers start at 1 for every log).
type LocalBus struct{}

// NewLocalBus returns the in-process event bus.
func NewLocalBus() LocalBus { return LocalBus{} }

var _ EventBus = LocalBus{}

// Open implements EventBus.
func (LocalBus) Open(string) (EventLog, context.Context) {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &localLog{cancel: cancel, subs: map[*localSub]struct{}{}}, ctx
}

// localLog is one turn's in-process log.
type localLog struct {
	cancel context.CancelCauseFunc

	mu     sync.Mutex
	seq    uint64
	subs   map[*localSub]struct{}
	closed bool
}

func (l *localLog) Publish(ev a2a.StreamResponse) uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return l.seq
	}
	l.seq++
	for s := range l.subs {
		s.push(Event{Seq: l.seq, Response: ev})
	}
	return l.seq
}

func (l *localLog) Last() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.seq
}

func (l *localLog) Subscribe(after uint64) (Subscription, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if after != l.seq {
		return nil, ErrEventsGone
	}
	s := &localSub{notify: make(chan struct{}, 1), log: l}
	if l.closed {
		s.closed = true
	} else {
		l.subs[s] = struct{}{}
	}
	return s, nil
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

// localSub is one subscription's ordered queue, bounded at MaxQueuedEvents.
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
