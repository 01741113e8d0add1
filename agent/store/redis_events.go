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
var appendEventsScript = redis.NewScript(leLua + `
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
      redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], seq .. '-0', 'b', leExpand(b, KEYS[2]))
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

// leEvent parses a task hash's le field ("<seq> <JSON>", or "<seq>
// =<end>" with the hash's b field, redis_le.go).
func leEvent(taskID, v, b string) (Event, error) {
	seq, le, ok := strings.Cut(v, " ")
	n, err := strconv.ParseUint(seq, 10, 64)
	body, expanded := leExpand(le, b)
	if !ok || err != nil || n == 0 || !expanded {
		return Event{}, fmt.Errorf("reading task events: malformed last event of task %q", taskID)
	}
	ev := Event{Seq: n}
	if err := json.Unmarshal([]byte(body), &ev.Response); err != nil {
		return Event{}, fmt.Errorf("decoding stored event of task %q: %w", taskID, err)
	}
	return ev, nil
}

// leFields returns the le and b fields of an HMGET of both.
func leFields(vals []any) (le, b string) {
	if len(vals) == 2 {
		le, _ = vals[0].(string)
		b, _ = vals[1].(string)
	}
	return le, b
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
	var leCmd *redis.SliceCmd
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		rng = p.XRange(ctx, key, strconv.FormatUint(after+1, 10)+"-0", "+")
		top = p.XRevRangeN(ctx, key, "+", "-", 1)
		leCmd = p.HMGet(ctx, s.taskKey(taskID), "le", "b")
		return nil
	}); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.opErr("reading task events", err)
	}
	msgs := rng.Val()
	if v, b := leFields(leCmd.Val()); v != "" && len(msgs) == 0 && len(top.Val()) == 0 {
		// No stream: the log is the le event alone.
		ev, err := leEvent(taskID, v, b)
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
