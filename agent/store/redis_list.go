package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// ListTasks returns one page of the owner's tasks, status time descending
// then id descending (RPC-9). The filters pick one of the owner's sorted
// sets (all, per context, per state, per context and state); the page is
// a lexicographic range walk (ZRANGE BYLEX REV, max first) of limit+1
// members from the cursor, and Total
// is ZCARD (or ZLEXCOUNT from StatusAfter) of the same set, read in the
// same MULTI. Then the page's records are read in one pipeline.
func (s *Redis) ListTasks(ctx context.Context, q ListQuery) (ListResult, error) {
	if err := s.live(); err != nil {
		return ListResult{}, err
	}
	if q.Limit < 1 {
		return ListResult{}, fmt.Errorf("listing tasks: limit %d is not positive", q.Limit)
	}
	key := s.listKey(q.Owner, q.ContextID, string(q.State))
	lo, hi := "-", "+"
	if !q.StatusAfter.IsZero() {
		lo = "[" + padMS(ceilMilli(q.StatusAfter))
	}
	if q.After != nil {
		hi = "(" + member(q.After.StatusTime.UnixMilli(), q.After.TaskID)
	}
	var total *redis.IntCmd
	var page *redis.StringSliceCmd
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if lo == "-" {
			total = p.ZCard(ctx, key)
		} else {
			total = p.ZLexCount(ctx, key, lo, "+")
		}
		page = p.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: hi, Stop: lo, ByLex: true, Rev: true, Count: int64(q.Limit + 1)})
		return nil
	})
	if err != nil {
		return ListResult{}, s.opErr("listing tasks", err)
	}
	members := page.Val()
	res := ListResult{Total: int(total.Val())}
	if len(members) > q.Limit {
		last := members[q.Limit-1]
		ms, id, _ := splitMember(last)
		res.Next = &Cursor{StatusTime: time.UnixMilli(ms).UTC(), TaskID: id}
		members = members[:q.Limit]
	}
	res.Tasks, err = s.loadPage(ctx, q, members)
	if err != nil {
		return ListResult{}, err
	}
	return res, nil
}

// splitMember parses a sorted set member (see member).
func splitMember(m string) (int64, string, bool) {
	ts, id, ok := strings.Cut(m, ":")
	if !ok {
		return 0, "", false
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	return ms, id, err == nil
}

// loadPage reads the records of a page in one pipeline. A member whose
// record is gone, or whose owner differs, is skipped.
func (s *Redis) loadPage(ctx context.Context, q ListQuery, members []string) ([]a2a.Task, error) {
	if len(members) == 0 {
		return []a2a.Task{}, nil
	}
	fields := []string{"o", "b"}
	if q.IncludeArtifacts {
		fields = append(fields, "a")
	}
	cmds := make([]*redis.SliceCmd, len(members))
	_, err := s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			_, id, _ := splitMember(m)
			cmds[i] = p.HMGet(ctx, s.taskKey(id), fields...)
		}
		return nil
	})
	if err != nil {
		return nil, s.opErr("listing tasks", err)
	}
	tasks := make([]a2a.Task, 0, len(members))
	for _, c := range cmds {
		vals := c.Val()
		if o, ok := vals[0].(string); !ok || o != q.Owner {
			continue
		}
		body, _ := vals[1].(string)
		var arts string
		if q.IncludeArtifacts {
			arts, _ = vals[2].(string)
		}
		tasks = append(tasks, a2a.Task{})
		if err := decodeTask(&tasks[len(tasks)-1], []byte(body), []byte(arts), q.IncludeArtifacts); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}
