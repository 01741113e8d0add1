package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Live events and cancels across instances on Redis (SCALE-1): a follower
// reads the task's stream P{t:<id>}:ev with XREAD BLOCK (bounded steps, on
// a pooled connection, from the last id it saw), and cancels go out on one
// pub/sub channel, P{c}:cancel, that every instance listens to: the task
// id as the message, acted on by the instance running that task's turn.

var _ SharedEvents = (*Redis)(nil)

// LiveBlock bounds one blocking read of a live subscription: how late it
// notices that its context ended or that it was closed.
const LiveBlock = time.Second

// liveBatch is how many entries one read takes at most.
const liveBatch = 256

func (s *Redis) cancelChannel() string { return s.p + "{c}:cancel" }

// LiveEvents implements SharedEvents.
func (s *Redis) LiveEvents(ctx context.Context, taskID string, after uint64) (Subscription, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	return &redisLiveSub{s: s, taskID: taskID, key: s.eventsKey(taskID), last: after}, nil
}

// redisLiveSub is one follower of a task's stream; read by one goroutine.
type redisLiveSub struct {
	s      *Redis
	taskID string
	key    string
	last   uint64
	queue  []Event
	ended  bool
	closed atomic.Bool
}

// Buffered implements Subscription: false, Next reads Redis.
func (l *redisLiveSub) Buffered() bool { return false }

// Ready implements Subscription: nil, the reader waits in Next.
func (l *redisLiveSub) Ready() <-chan struct{} { return nil }

// Next implements Subscription.
func (l *redisLiveSub) Next(ctx context.Context) (Event, bool) {
	for {
		if l.closed.Load() || l.ended {
			l.queue = nil
			return Event{}, false
		}
		if len(l.queue) > 0 {
			ev := l.queue[0]
			l.queue = l.queue[1:]
			return ev, true
		}
		if ctx.Err() != nil {
			return Event{}, false
		}
		block := LiveBlock
		if dl, ok := ctx.Deadline(); ok {
			block = min(block, time.Until(dl))
		}
		if block < time.Millisecond {
			block = time.Millisecond // 0 would block for ever
		}
		res, err := l.s.c.XRead(ctx, &redis.XReadArgs{
			Streams: []string{l.key, strconv.FormatUint(l.last, 10) + "-0"},
			Count:   liveBatch,
			Block:   block,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			// Nothing new in the stream within block; a turn nobody
			// watched may have logged its end in the task hash
			// (redis_events.go: the le event of a task without stream).
			if ev, ok := l.leAfter(ctx); ok {
				l.last = ev.Seq
				l.queue = append(l.queue, ev)
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return Event{}, false
			}
			l.ended = true // the store closed or Redis is gone: the follower ends
			return Event{}, false
		}
		for _, st := range res {
			for _, m := range st.Messages {
				seq, err := streamSeq(m.ID)
				if err != nil || seq <= l.last {
					continue
				}
				body, _ := m.Values["b"].(string)
				ev := Event{Seq: seq}
				if err := json.Unmarshal([]byte(body), &ev.Response); err != nil {
					l.ended = true
					return Event{}, false
				}
				l.last = seq
				l.queue = append(l.queue, ev)
			}
		}
	}
}

// leAfter returns the task's le event when it is above the last one the
// follower saw.
func (l *redisLiveSub) leAfter(ctx context.Context) (Event, bool) {
	vals, err := l.s.c.HMGet(ctx, l.s.taskKey(l.taskID), "le", "b").Result()
	v, b := leFields(vals)
	if err != nil || v == "" {
		return Event{}, false
	}
	ev, err := leEvent(l.taskID, v, b)
	if err != nil || ev.Seq <= l.last {
		return Event{}, false
	}
	return ev, true
}

// Close implements Subscription: the next Next (or the one blocked, after
// its read of at most LiveBlock) reports false.
func (l *redisLiveSub) Close() { l.closed.Store(true) }

// cancelFlagKey marks a cancel requested for task id (its slot), so that
// the running instance sees it even when the pub/sub message is lost.
func (s *Redis) cancelFlagKey(id string) string { return s.taskKey(id) + ":cx" }

// cancelFlagTTL is how long a cancel request stays visible to the sweep.
const cancelFlagTTL = time.Minute

// cancelSweep is how often an instance looks for cancel flags of the
// tasks it runs (a cancel whose pub/sub message it did not get).
const cancelSweep = time.Second

// PublishCancel implements SharedEvents: a flag on the task (found by the
// running instance's sweep within cancelSweep, should the message be
// lost) and a pub/sub message (at once).
func (s *Redis) PublishCancel(ctx context.Context, taskID string) error {
	if err := s.live(); err != nil {
		return err
	}
	if err := s.c.Set(ctx, s.cancelFlagKey(taskID), "1", cancelFlagTTL).Err(); err != nil {
		return s.opErr("sending a cancel", err)
	}
	if err := s.c.Publish(ctx, s.cancelChannel(), taskID).Err(); err != nil {
		return s.opErr("sending a cancel", err)
	}
	return nil
}

// flaggedCancels returns (and clears) the cancel flags of the tasks this
// instance records as running.
func (s *Redis) flaggedCancels(ctx context.Context) ([]string, error) {
	if s.inst == nil {
		return nil, nil
	}
	ids, err := s.runMembers(ctx, s.inst.id)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	cmds := make([]*redis.IntCmd, len(ids))
	_, err = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.Del(ctx, s.cancelFlagKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []string
	for i, c := range cmds {
		if c.Val() == 1 {
			out = append(out, ids[i])
		}
	}
	return out, nil
}

// cancelQueue bounds the cancel requests buffered for a slow listener.
const cancelQueue = 256

// CancelRequests implements SharedEvents: one pub/sub connection (go-redis
// resubscribes after a reconnect), and every cancelSweep the cancel flags
// of the tasks this instance runs — a cancel published while the pub/sub
// connection was down arrives that way. A task id may arrive twice.
func (s *Redis) CancelRequests(ctx context.Context) (<-chan string, error) {
	if err := s.live(); err != nil {
		return nil, err
	}
	ps := s.c.Subscribe(ctx, s.cancelChannel())
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, s.opErr("listening for cancels", fmt.Errorf("subscribe: %w", err))
	}
	out := make(chan string, cancelQueue)
	in := ps.Channel()
	go func() {
		defer close(out)
		defer ps.Close()
		sweep := time.NewTicker(cancelSweep)
		defer sweep.Stop()
		send := func(id string) {
			select {
			case out <- id:
			default: // a full queue drops it (one from pub/sub comes back with the sweep)
			}
		}
		for {
			select {
			case <-ctx.Done():
				return
			case m, ok := <-in:
				if !ok {
					return
				}
				send(m.Payload)
			case <-sweep.C:
				ids, _ := s.flaggedCancels(ctx)
				for _, id := range ids {
					send(id)
				}
			}
		}
	}()
	return out, nil
}
