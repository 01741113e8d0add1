package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// The event log of resumable streams in Redis (RPC-17): one stream per
// task, P{t:<id>}:ev (the task's hash tag, so its slot is the task's), an
// entry per event with the id <seq>-0 and the event's JSON in field b,
// trimmed to the newest keep entries. AppendEvents hands the events to a
// flusher that writes them at once, all that arrived during the previous
// write in one script, so every instance on the Redis sees an event about
// as soon as it was published, and no later than the task's next write.
//
// A task whose turns nobody watched logs only the event that ends each
// turn (LocalBus). While the task has no stream, that one event is kept
// in the task hash instead, field le = "<seq> <JSON>" (issue 32: a stream
// costs Redis over 4 KiB however small, a hash field its bytes). The first
// append of more (a watched turn) creates the stream with the le event
// first and drops the field: a task's log is its stream, or its le field,
// never both. Readers (Events, LastEventSeq, followers) look at both.

var _ EventStore = (*Redis)(nil)

func (s *Redis) eventsKey(id string) string { return s.taskKey(id) + ":ev" }

// appendEventsScript adds events to a task's log and trims it to ARGV[1]
// entries; an event not above the log's last one (a retried append) is
// skipped: XADD refuses its id, and the script goes on. ARGV[3] "1" says
// the events are one event ending an unwatched turn: without a stream it
// goes to the task hash's le field. Otherwise, without a stream, the le
// event (if any) opens the new stream. When ARGV[2] is above 0 (the task
// has a final state) the stream expires ARGV[2] ms later. Nothing is read
// but the stream's existence and, when it is created, the le field.
//
// KEYS[1] the stream, KEYS[2] the task hash. ARGV keep, TTL ms, le flag,
// then seq, body pairs (ascending).
var appendEventsScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then
  if ARGV[3] == '1' then
    local le = redis.call('HGET', KEYS[2], 'le')
    if le and tonumber(string.match(le, '^(%d+) ')) >= tonumber(ARGV[4]) then return 0 end
    redis.call('HSET', KEYS[2], 'le', ARGV[4] .. ' ' .. ARGV[5])
    return 1
  end
  local le = redis.call('HGET', KEYS[2], 'le')
  if le then
    local seq, b = string.match(le, '^(%d+) (.*)$')
    if tonumber(seq) < tonumber(ARGV[4]) then
      redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], seq .. '-0', 'b', b)
    end
    redis.call('HDEL', KEYS[2], 'le')
  end
end
local n = 0
for i = 4, #ARGV, 2 do
  local r = redis.pcall('XADD', KEYS[1], 'MAXLEN', ARGV[1], ARGV[i] .. '-0', 'b', ARGV[i+1])
  if type(r) ~= 'table' then n = n + 1 end
end
if tonumber(ARGV[2]) > 0 and n > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return n
`)

// endsTurnEvent reports whether ev ends a turn (input-required,
// auth-required or a final state): the one event of an unwatched turn.
func endsTurnEvent(ev a2a.StreamResponse) bool {
	su := ev.StatusUpdate
	return su != nil && (su.Status.State.Terminal() || su.Status.State.Interrupted())
}

// leEvent parses a task hash's le field ("<seq> <JSON>").
func leEvent(taskID, v string) (Event, error) {
	seq, body, ok := strings.Cut(v, " ")
	n, err := strconv.ParseUint(seq, 10, 64)
	if !ok || err != nil || n == 0 {
		return Event{}, fmt.Errorf("reading task events: malformed last event of task %q", taskID)
	}
	ev := Event{Seq: n}
	if err := json.Unmarshal([]byte(body), &ev.Response); err != nil {
		return Event{}, fmt.Errorf("decoding stored event of task %q: %w", taskID, err)
	}
	return ev, nil
}

// endedTasks bounds the tasks a handle remembers having written in a
// final state (endedHere).
const endedTasks = 4096

// markEnded remembers that this handle wrote task id in a final state, so
// that events it appends afterwards set the log's expiry without reading
// the task (the instance that ends a turn is the one that logs it).
func (s *Redis) markEnded(id string) {
	if s.evTTL <= 0 {
		return
	}
	s.endedMu.Lock()
	defer s.endedMu.Unlock()
	if s.ended == nil || len(s.ended) >= endedTasks {
		s.ended = make(map[string]struct{}, 64)
	}
	s.ended[id] = struct{}{}
}

// endedHere reports (and forgets) whether this handle wrote task id in a
// final state.
func (s *Redis) endedHere(id string) bool {
	s.endedMu.Lock()
	defer s.endedMu.Unlock()
	_, ok := s.ended[id]
	delete(s.ended, id)
	return ok
}

// finalEvents reports whether evs hold a status update (or a task) in a
// final state: the append sets the log's expiry then.
func finalEvents(evs []Event) bool {
	for _, ev := range evs {
		if su := ev.Response.StatusUpdate; su != nil && su.Status.State.Terminal() {
			return true
		}
		if t := ev.Response.Task; t != nil && t.Status.State.Terminal() {
			return true
		}
	}
	return false
}

// redisEventTimeout bounds one AppendEvents: it runs in the turn's
// Publish, which must not stall long on an unreachable Redis (an event
// not written leaves a gap, which a resuming stream gets as a snapshot).
const redisEventTimeout = 3 * time.Second

// AppendEvents implements EventStore: the events are held for this
// handle's flusher or for the task's next write (see "Held events"
// below), within redisEventTimeout once written.
func (s *Redis) AppendEvents(taskID string, evs []Event, keep int) error {
	if err := s.live(); err != nil {
		return err
	}
	if len(evs) == 0 {
		return nil
	}
	if keep <= 0 {
		keep = DefaultEventLogSize
	}
	if len(evs) > keep {
		evs = evs[len(evs)-keep:]
	}
	args := make([]any, 0, 2+2*len(evs))
	args = append(args, keep, 0)
	for _, ev := range evs {
		if ev.Seq == 0 {
			return fmt.Errorf("writing task events: event without a sequence number")
		}
		b, err := a2a.MarshalJSONString(&ev.Response)
		if err != nil {
			return fmt.Errorf("encoding event %d of task %q: %w", ev.Seq, taskID, err)
		}
		args = append(args, strconv.FormatUint(ev.Seq, 10), b)
	}
	ttl := int64(0)
	ended := s.endedHere(taskID) // written in a final state already
	if ended || finalEvents(evs) {
		ttl = max(s.evTTL.Milliseconds(), 0)
	}
	le := len(evs) == 1 && endsTurnEvent(evs[0].Response)
	if ended {
		// Written in a final state already (a reaper logging the failure
		// after its write): no write will carry them.
		return s.appendNow(taskID, append([]any{keep, ttl, flag(le)}, args[2:]...))
	}
	s.hold(taskID, args[2:], keep, le, ttl > 0)
	return nil
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// appendNow runs appendEventsScript with args.
func (s *Redis) appendNow(taskID string, args []any) error {
	ctx, cancel := context.WithTimeout(context.Background(), redisEventTimeout)
	defer cancel()
	if err := appendEventsScript.Run(ctx, s.c, []string{s.eventsKey(taskID), s.taskKey(taskID)}, args...).Err(); err != nil {
		return s.opErr("writing task events", err)
	}
	return nil
}

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

// args are the events' arguments of a write script (see putRecordLua).
func (h heldArgs) args() []any {
	if len(h.pairs) == 0 {
		return nil
	}
	out := make([]any, 0, 2+len(h.pairs))
	out = append(out, h.keep, flag(h.le))
	for _, p := range h.pairs {
		out = append(out, p)
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

// LastEventSeq implements EventStore: the id of the stream's last entry,
// or the sequence number of the task's le event.
func (s *Redis) LastEventSeq(ctx context.Context, taskID string) (uint64, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	s.syncHeld(taskID)
	var top *redis.XMessageSliceCmd
	var le *redis.StringCmd
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		top = p.XRevRangeN(ctx, s.eventsKey(taskID), "+", "-", 1)
		le = p.HGet(ctx, s.taskKey(taskID), "le")
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return 0, s.opErr("reading task events", err)
	}
	last, err := lastStreamSeq(top.Val())
	if err != nil {
		return 0, err
	}
	if v := le.Val(); v != "" {
		seq, _, _ := strings.Cut(v, " ")
		if n, err := strconv.ParseUint(seq, 10, 64); err == nil && n > last {
			last = n
		}
	}
	return last, nil
}

// lastStreamSeq returns the sequence number of the last of msgs (0 when
// there is none).
func lastStreamSeq(msgs []redis.XMessage) (uint64, error) {
	if len(msgs) == 0 {
		return 0, nil
	}
	return streamSeq(msgs[len(msgs)-1].ID)
}

// streamSeq parses the sequence number of an entry id <seq>-0.
func streamSeq(id string) (uint64, error) {
	ms, _, _ := strings.Cut(id, "-")
	n, err := strconv.ParseUint(ms, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading task events: unexpected entry id %q", id)
	}
	return n, nil
}

// Events implements EventStore: the entries from after+1 on and the last
// entry, read in one pipeline.
func (s *Redis) Events(ctx context.Context, taskID string, after uint64) ([]Event, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	s.syncHeld(taskID)
	key := s.eventsKey(taskID)
	var rng *redis.XMessageSliceCmd
	var top *redis.XMessageSliceCmd
	var leCmd *redis.StringCmd
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		rng = p.XRange(ctx, key, strconv.FormatUint(after+1, 10)+"-0", "+")
		top = p.XRevRangeN(ctx, key, "+", "-", 1)
		leCmd = p.HGet(ctx, s.taskKey(taskID), "le")
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.opErr("reading task events", err)
	}
	msgs := rng.Val()
	if v := leCmd.Val(); v != "" && len(msgs) == 0 && len(top.Val()) == 0 {
		// No stream: the log is the le event alone.
		ev, err := leEvent(taskID, v)
		if err != nil {
			return nil, err
		}
		switch {
		case ev.Seq == after:
			return nil, nil
		case ev.Seq == after+1:
			return []Event{ev}, nil
		}
		return nil, ErrEventsGone
	}
	if len(msgs) == 0 {
		last, err := lastStreamSeq(top.Val())
		if err != nil {
			return nil, err
		}
		if after != last {
			return nil, ErrEventsGone
		}
		return nil, nil
	}
	out := make([]Event, 0, len(msgs))
	for _, m := range msgs {
		seq, err := streamSeq(m.ID)
		if err != nil {
			return nil, err
		}
		body, _ := m.Values["b"].(string)
		ev := Event{Seq: seq}
		if err := json.Unmarshal([]byte(body), &ev.Response); err != nil {
			return nil, fmt.Errorf("decoding stored event of task %q: %w", taskID, err)
		}
		out = append(out, ev)
	}
	if out[0].Seq != after+1 {
		return nil, ErrEventsGone
	}
	return out, nil
}
