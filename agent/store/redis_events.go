package store

import (
	"context"
	"encoding/json"
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
// trimmed to the newest keep entries. AppendEvents writes at once (one
// script, one round trip), so every instance on the Redis sees an event as
// soon as it was published, before the task's next write.

var _ EventStore = (*Redis)(nil)

func (s *Redis) eventsKey(id string) string { return s.taskKey(id) + ":ev" }

// appendEventsScript adds events to a task's stream, skipping those not
// above its last entry (a retried append), and trims it to ARGV[1]
// entries; once the task's stored state is final, the stream expires
// ARGV[2] ms later (0: never).
//
// KEYS[1] the stream, KEYS[2] the task hash. ARGV keep, TTL ms, then seq,
// body pairs (ascending).
var appendEventsScript = redis.NewScript(`
local last = 0
local top = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #top > 0 then last = tonumber(string.match(top[1][1], '^(%d+)')) end
local n = 0
for i = 3, #ARGV, 2 do
  local seq = tonumber(ARGV[i])
  if seq > last then
    redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[1], ARGV[i] .. '-0', 'b', ARGV[i+1])
    last = seq
    n = n + 1
  end
end
if tonumber(ARGV[2]) > 0 and n > 0 then
  local st = redis.call('HGET', KEYS[2], 's')
  if ` + terminalLua + ` then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
end
return n
`)

// terminalLua is a Lua condition: st is a final task state.
var terminalLua = "st == '" + string(a2a.TaskStateCompleted) + "' or st == '" + string(a2a.TaskStateFailed) +
	"' or st == '" + string(a2a.TaskStateCanceled) + "' or st == '" + string(a2a.TaskStateRejected) + "'"

// redisEventTimeout bounds one AppendEvents: it runs in the turn's
// Publish, which must not stall long on an unreachable Redis (an event
// not written leaves a gap, which a resuming stream gets as a snapshot).
const redisEventTimeout = 3 * time.Second

// AppendEvents implements EventStore: the events are written at once
// (about 70 µs per event on a local Redis), within redisEventTimeout.
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
	args = append(args, keep, max(s.evTTL.Milliseconds(), 0))
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
	ctx, cancel := context.WithTimeout(context.Background(), redisEventTimeout)
	defer cancel()
	if err := appendEventsScript.Run(ctx, s.c, []string{s.eventsKey(taskID), s.taskKey(taskID)}, args...).Err(); err != nil {
		return s.opErr("writing task events", err)
	}
	return nil
}

// LastEventSeq implements EventStore: the id of the stream's last entry.
func (s *Redis) LastEventSeq(ctx context.Context, taskID string) (uint64, error) {
	if err := s.live(); err != nil {
		return 0, err
	}
	top, err := s.c.XRevRangeN(ctx, s.eventsKey(taskID), "+", "-", 1).Result()
	if err != nil {
		return 0, s.opErr("reading task events", err)
	}
	return lastStreamSeq(top)
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
	key := s.eventsKey(taskID)
	var rng *redis.XMessageSliceCmd
	var top *redis.XMessageSliceCmd
	if _, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		rng = p.XRange(ctx, key, strconv.FormatUint(after+1, 10)+"-0", "+")
		top = p.XRevRangeN(ctx, key, "+", "-", 1)
		return nil
	}); err != nil {
		return nil, s.opErr("reading task events", err)
	}
	msgs := rng.Val()
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
