package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The event log of resumable streams in SQLite (RPC-17): appended events
// wait in memory for the next write of their task and are inserted in its
// transaction, so a task's stored state and its stored events always agree
// and an event costs no transaction of its own.

const (
	lastEventSQL  = `SELECT COALESCE(MAX(seq), 0) FROM task_events WHERE task_id = ?`
	readEventsSQL = `SELECT seq, body FROM task_events WHERE task_id = ? AND seq > ? ORDER BY seq`
)

var _ EventStore = (*SQLite)(nil)

// encodedEvent is an event ready for the events table.
type encodedEvent struct {
	seq  uint64
	body string
}

// pendingLog is one task's appended events not handed to a write yet.
type pendingLog struct {
	evs  []Event
	keep int
}

// pendingEvents holds the appended events of every task until a write of
// the task takes them.
type pendingEvents struct {
	mu sync.Mutex
	m  map[string]*pendingLog
}

// add appends evs to the task's pending events, keeping the last keep.
func (p *pendingEvents) add(taskID string, evs []Event, keep int) {
	if keep <= 0 {
		keep = DefaultEventLogSize
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]*pendingLog{}
	}
	l := p.m[taskID]
	if l == nil {
		l = &pendingLog{}
		p.m[taskID] = l
	}
	l.keep = keep
	l.evs = append(l.evs, evs...)
	if n := len(l.evs) - keep; n > 0 {
		l.evs = append(l.evs[:0:0], l.evs[n:]...)
	}
}

// snapshot returns a copy of the task's pending events.
func (p *pendingEvents) snapshot(taskID string) []Event {
	p.mu.Lock()
	defer p.mu.Unlock()
	if l := p.m[taskID]; l != nil {
		return append([]Event(nil), l.evs...)
	}
	return nil
}

// drain moves the task's pending events into r, the task's write.
func (p *pendingEvents) drain(r *writeReq, taskID string) error {
	p.mu.Lock()
	l := p.m[taskID]
	delete(p.m, taskID)
	p.mu.Unlock()
	if l == nil || len(l.evs) == 0 {
		return nil
	}
	r.events = make([]encodedEvent, len(l.evs))
	for i, ev := range l.evs {
		b, err := a2a.MarshalJSONString(&ev.Response)
		if err != nil {
			return fmt.Errorf("encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		r.events[i] = encodedEvent{seq: ev.Seq, body: b}
	}
	r.keep = l.keep
	return nil
}

// eventsPerInsert is how many events one INSERT statement writes.
const eventsPerInsert = 32

// insertEvents writes a task's events (one statement per up to
// eventsPerInsert of them) and prunes its log to keep events.
func (w *writer) insertEvents(taskID string, evs []encodedEvent, keep int) error {
	args := make([]any, 0, 3*min(len(evs), eventsPerInsert))
	for len(evs) > 0 {
		n := min(len(evs), eventsPerInsert)
		args = args[:0]
		for _, ev := range evs[:n] {
			args = append(args, taskID, int64(ev.seq), ev.body)
		}
		q := `INSERT OR REPLACE INTO task_events (task_id, seq, body) VALUES (?, ?, ?)` + strings.Repeat(`, (?, ?, ?)`, n-1)
		if _, err := w.exec(q, args...); err != nil {
			return fmt.Errorf("writing task events: %w", err)
		}
		last := evs[n-1].seq
		evs = evs[n:]
		if len(evs) == 0 && keep > 0 && last > uint64(keep) {
			if _, err := w.exec(`DELETE FROM task_events WHERE task_id = ? AND seq <= ?`, taskID, int64(last-uint64(keep))); err != nil {
				return fmt.Errorf("pruning task events: %w", err)
			}
		}
	}
	return nil
}

// AppendEvents implements EventStore: the events are written with the
// task's next write.
func (s *SQLite) AppendEvents(taskID string, evs []Event, keep int) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if len(evs) > 0 {
		s.events.add(taskID, evs, keep)
	}
	return nil
}

// LastEventSeq implements EventStore.
func (s *SQLite) LastEventSeq(ctx context.Context, taskID string) (uint64, error) {
	if s.closed.Load() {
		return 0, ErrClosed
	}
	if p := s.events.snapshot(taskID); len(p) > 0 {
		return p[len(p)-1].Seq, nil
	}
	var last int64
	if err := s.lastEvent.QueryRowContext(ctx, taskID).Scan(&last); err != nil {
		return 0, s.readErr(fmt.Errorf("reading task events: %w", err))
	}
	return uint64(last), nil
}

// Events implements EventStore: the stored events after after, then the
// pending ones.
func (s *SQLite) Events(ctx context.Context, taskID string, after uint64) ([]Event, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	pending := s.events.snapshot(taskID)
	rows, err := s.readEvents.QueryContext(ctx, taskID, int64(after))
	if err != nil {
		return nil, s.readErr(fmt.Errorf("reading task events: %w", err))
	}
	var out []Event
	for rows.Next() {
		var seq int64
		var body sql.RawBytes
		if err := rows.Scan(&seq, &body); err != nil {
			_ = rows.Close()
			return nil, s.readErr(fmt.Errorf("reading task events: %w", err))
		}
		if len(pending) > 0 && uint64(seq) >= pending[0].Seq {
			break // the pending events are newer
		}
		ev := Event{Seq: uint64(seq)}
		if err := json.Unmarshal(body, &ev.Response); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("decoding stored event of task %q: %w", taskID, err)
		}
		out = append(out, ev)
	}
	if err := rows.Close(); err != nil {
		return nil, s.readErr(fmt.Errorf("reading task events: %w", err))
	}
	for _, ev := range pending {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	if len(out) > 0 {
		if out[0].Seq != after+1 {
			return nil, ErrEventsGone
		}
		return out, nil
	}
	// Nothing after after: fine when after is the last event.
	last, err := s.LastEventSeq(ctx, taskID)
	if err != nil {
		return nil, err
	}
	if after != last {
		return nil, ErrEventsGone
	}
	return nil, nil
}
