package store

import (
	"time"
)

// Held events (issue 32). AppendEvents hands a task's events to a
// flusher and returns: one script writes every event that arrived while
// the previous script ran (a watched turn publishing quickly costs one
// round trip per batch, not per event), in order. The event that ends an
// unwatched turn is published just before the turn's final write
// (agent: finalize): it is held for at most deferFlush and written by
// that write's script (no round trip of its own); without a write in
// time it is written alone. A write of the task, Events and LastEventSeq
// on this handle first wait for a flush under way, then take what is
// held: the handle reads its own events, and the log is in order.

// deferFlush bounds how long an event waits for its task's write.
const deferFlush = 250 * time.Millisecond

// heldEvents are a task's events not yet written.
type heldEvents struct {
	pairs    []string // seq, body
	keep     int
	le       bool // pairs is one event ending an unwatched turn
	final    bool // some event ends the task (its log expires)
	timer    *time.Timer
	flushing bool
	idle     chan struct{} // closed when the flush under way ends
}

// heldArgs are held events taken for a write.
type heldArgs struct {
	pairs []string
	keep  int
	le    bool
}

// args are the events' arguments of a write script (see putRecordLua)
// that writes the task JSON body: one event ending an unwatched turn is
// passed as a reference to body when it can be (redis_le.go).
func (h heldArgs) args(body string) []any {
	if len(h.pairs) == 0 {
		return nil
	}
	out := make([]any, 0, 2+len(h.pairs))
	out = append(out, h.keep, flag(h.le))
	for _, p := range h.pairs {
		out = append(out, p)
	}
	if h.le && len(h.pairs) == 2 {
		out[3] = leRef(h.pairs[1], body)
	}
	return out
}

// hold queues pairs (seq, body) of task id for the flusher, or, for one
// event ending an unwatched turn, for the task's write.
func (s *Redis) hold(id string, pairs []any, keep int, le, final bool) {
	s.deferMu.Lock()
	defer s.deferMu.Unlock()
	if s.held == nil {
		s.held = map[string]*heldEvents{}
	}
	q := s.held[id]
	if q == nil {
		q = &heldEvents{}
		s.held[id] = q
	}
	empty := len(q.pairs) == 0
	for _, p := range pairs {
		q.pairs = append(q.pairs, p.(string))
	}
	q.keep, q.final = keep, q.final || final
	q.le = le && empty
	if q.le && !q.flushing {
		if q.timer == nil {
			q.timer = time.AfterFunc(deferFlush, func() { s.startFlush(id, q) })
		}
		return
	}
	if q.timer != nil {
		q.timer.Stop()
		q.timer = nil
	}
	if !q.flushing {
		q.flushing, q.idle = true, make(chan struct{})
		s.wg.Add(1)
		go s.flushLoop(id, q)
	}
}

// startFlush writes q's events alone (no write came in time).
func (s *Redis) startFlush(id string, q *heldEvents) {
	s.deferMu.Lock()
	if s.held[id] != q || q.flushing || len(q.pairs) == 0 {
		s.deferMu.Unlock()
		return
	}
	q.timer = nil
	q.flushing, q.idle = true, make(chan struct{})
	s.wg.Add(1)
	s.deferMu.Unlock()
	s.flushLoop(id, q)
}

// flushLoop writes q's events, batch after batch, until none is left.
func (s *Redis) flushLoop(id string, q *heldEvents) {
	defer s.wg.Done()
	for {
		s.deferMu.Lock()
		if len(q.pairs) == 0 {
			q.flushing = false
			close(q.idle)
			if q.timer == nil && s.held[id] == q {
				delete(s.held, id)
			}
			s.deferMu.Unlock()
			return
		}
		if q.timer != nil {
			q.timer.Stop()
			q.timer = nil
		}
		pairs, keep, le, final := q.pairs, q.keep, q.le, q.final
		q.pairs, q.le, q.final = nil, false, false
		s.deferMu.Unlock()
		ttl := int64(0)
		if final {
			ttl = max(s.evTTL.Milliseconds(), 0)
		}
		args := append(make([]any, 0, 3+len(pairs)), keep, ttl, flag(le))
		for _, p := range pairs {
			args = append(args, p)
		}
		_ = s.appendNow(id, args) // a failure leaves a gap: a resume gets the snapshot
	}
}

// takeHeld waits for a flush of task id under way and takes what is held.
func (s *Redis) takeHeld(id string) heldArgs {
	s.deferMu.Lock()
	defer s.deferMu.Unlock()
	q := s.held[id]
	for q != nil && q.flushing {
		idle := q.idle
		s.deferMu.Unlock()
		<-idle
		s.deferMu.Lock()
		q = s.held[id]
	}
	if q == nil {
		return heldArgs{}
	}
	if q.timer != nil {
		q.timer.Stop() // taken under the lock: the timer writes nothing
		q.timer = nil
	}
	delete(s.held, id)
	return heldArgs{pairs: q.pairs, keep: q.keep, le: q.le}
}

// syncHeld writes what task id has held (reads see the handle's events).
func (s *Redis) syncHeld(id string) {
	if h := s.takeHeld(id); len(h.pairs) > 0 {
		s.putBack(id, h)
	}
}

// flushAllDeferred writes every held event (Close).
func (s *Redis) flushAllDeferred() {
	s.deferMu.Lock()
	ids := make([]string, 0, len(s.held))
	for id := range s.held {
		ids = append(ids, id)
	}
	s.deferMu.Unlock()
	for _, id := range ids {
		s.syncHeld(id)
	}
}

// putBack writes taken events alone (their write failed, or a read).
func (s *Redis) putBack(id string, h heldArgs) {
	if len(h.pairs) == 0 {
		return
	}
	args := append(make([]any, 0, 3+len(h.pairs)), h.keep, 0, flag(h.le))
	for _, p := range h.pairs {
		args = append(args, p)
	}
	_ = s.appendNow(id, args)
}
