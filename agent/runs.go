package agent

import (
	"context"
	"sync"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// run is a task whose turn is in progress. It keeps the live snapshot of the
// task and fans its events out, in order, to any number of subscribers.
type run struct {
	owner  string
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the final state is stored and published

	// writeMu orders the lazy write of a running turn before its final
	// write; lazy is the timer of that lazy write.
	writeMu sync.Mutex
	lazy    *time.Timer
	// durable says the SUBMITTED task was stored before the caller heard of
	// it (streaming, returnImmediately, push): later states are stored at
	// once too, without waiting for the commit.
	durable bool

	mu        sync.Mutex
	task      a2a.Task
	subs      map[*subscriber]struct{}
	finished  bool
	canceling bool
	finalized bool // the final state is decided; later backend events are dropped
	// invalidResponse is the correlation id of a turn that ended FAILED on
	// invalid backend output: a blocking SendMessage answers -32006.
	invalidResponse string
}

func newRun(owner string, t *a2a.Task, cancel context.CancelCauseFunc) *run {
	return &run{owner: owner, task: *t, cancel: cancel, done: make(chan struct{}), subs: map[*subscriber]struct{}{}}
}

// snapshot returns a copy of the live task safe to hand out.
func (r *run) snapshot() a2a.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return cloneTask(&r.task)
}

// ids returns the task's id and context id (both fixed for a run) without
// copying the task.
func (r *run) ids() (id, contextID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.task.ID, r.task.ContextID
}

// publish applies change to the live task (when non-nil) and delivers ev to
// every subscriber, atomically with respect to subscribe. Once the final
// state is decided, only publishFinal gets through.
func (r *run) publish(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized {
		return
	}
	r.deliver(ev, change)
}

// publishFinal publishes the events that close a turn.
func (r *run) publishFinal(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return
	}
	r.deliver(ev, change)
}

func (r *run) deliver(ev a2a.StreamResponse, change func(t *a2a.Task)) {
	if change != nil {
		change(&r.task)
	}
	for s := range r.subs {
		s.push(ev)
	}
}

// subscribe returns the current task and a subscriber that receives every
// later event; the subscriber ends once the run finishes.
func (r *run) subscribe() (a2a.Task, *subscriber) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &subscriber{notify: make(chan struct{}, 1), run: r}
	if r.finished {
		s.closed = true
	} else {
		r.subs[s] = struct{}{}
	}
	return cloneTask(&r.task), s
}

// subscribeLive is subscribe for SubscribeToTask: ok is false (and nothing
// is registered) once the run's final state is decided, when the caller
// must wait for done and read the stored task instead.
func (r *run) subscribeLive() (a2a.Task, *subscriber, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finalized || r.finished {
		return a2a.Task{}, nil, false
	}
	s := &subscriber{notify: make(chan struct{}, 1), run: r}
	r.subs[s] = struct{}{}
	return cloneTask(&r.task), s, true
}

func (r *run) unsubscribe(s *subscriber) {
	r.mu.Lock()
	delete(r.subs, s)
	r.mu.Unlock()
}

// finish closes every subscriber (after they drain) and marks the run done.
func (r *run) finish() {
	r.mu.Lock()
	r.finished = true
	for s := range r.subs {
		s.close()
	}
	r.subs = nil
	r.mu.Unlock()
	close(r.done)
}

// subscriber is one stream's ordered, unbounded event queue.
type subscriber struct {
	run    *run
	notify chan struct{}

	mu     sync.Mutex
	queue  []a2a.StreamResponse
	closed bool
}

// maxSubscriberQueue bounds the events waiting for one stream; a reader
// that falls this far behind is disconnected instead of buffering a whole
// turn's output in memory.
const maxSubscriberQueue = 8192

func (s *subscriber) push(ev a2a.StreamResponse) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	if len(s.queue) >= maxSubscriberQueue {
		s.queue, s.closed = nil, true
	} else {
		s.queue = append(s.queue, ev)
	}
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *subscriber) close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// next returns the next event; ok is false once the run has finished and
// every event was taken, or when ctx is done.
func (s *subscriber) next(ctx context.Context) (a2a.StreamResponse, bool) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			ev := s.queue[0]
			s.queue[0] = a2a.StreamResponse{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return ev, true
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return a2a.StreamResponse{}, false
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return a2a.StreamResponse{}, false
		}
	}
}

// cloneTask copies a task deeply enough that later appends and status
// changes on the original do not show through.
func cloneTask(t *a2a.Task) a2a.Task {
	c := *t
	c.History = append([]a2a.Message(nil), t.History...)
	c.Artifacts = append([]a2a.Artifact(nil), t.Artifacts...)
	if len(c.History) == 0 {
		c.History = nil
	}
	if len(c.Artifacts) == 0 {
		c.Artifacts = nil
	}
	return c
}
