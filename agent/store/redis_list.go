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
// sets (all, per context, per state); the page is a lexicographic range
// walk (ZRANGE BYLEX REV, max first) of limit+1 members from the cursor,
// and Total is ZCARD (or ZLEXCOUNT from StatusAfter) of the same set,
// read in the same MULTI. With both a context and a state filter the
// context's set is walked and filtered by state in one script
// (listByState). Then the page's records are read in one pipeline.
func (s *Redis) ListTasks(ctx context.Context, q ListQuery) (ListResult, error) {
	if err := s.live(); err != nil {
		return ListResult{}, err
	}
	if q.Limit < 1 {
		return ListResult{}, fmt.Errorf("listing tasks: limit %d is not positive", q.Limit)
	}
	lo := "-"
	if !q.StatusAfter.IsZero() {
		lo = "[" + padMS(ceilMilli(q.StatusAfter))
	}
	cursor := ""
	if q.After != nil {
		cursor = member(q.After.StatusTime.UnixMilli(), q.After.TaskID)
	}
	var total int
	var members []string
	var err error
	if q.ContextID != "" && q.State != "" {
		total, members, err = s.listByState(ctx, q, lo, cursor, q.Limit+1)
	} else {
		total, members, err = s.listRange(ctx, s.listKey(q.Owner, q.ContextID, string(q.State)), lo, cursor, q.Limit+1)
	}
	if err != nil {
		return ListResult{}, err
	}
	res := ListResult{Total: total}
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

// listRange reads the total of the sorted set key from lo (ZCARD or
// ZLEXCOUNT) and up to want members below cursor ("" = from the top) in
// one MULTI.
func (s *Redis) listRange(ctx context.Context, key, lo, cursor string, want int) (int, []string, error) {
	hi := "+"
	if cursor != "" {
		hi = "(" + cursor
	}
	var total *redis.IntCmd
	var page *redis.StringSliceCmd
	_, err := s.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if lo == "-" {
			total = p.ZCard(ctx, key)
		} else {
			total = p.ZLexCount(ctx, key, lo, "+")
		}
		page = p.ZRangeArgs(ctx, redis.ZRangeArgs{Key: key, Start: hi, Stop: lo, ByLex: true, Rev: true, Count: int64(want)})
		return nil
	})
	if err != nil {
		return 0, nil, s.opErr("listing tasks", err)
	}
	return int(total.Val()), page.Val(), nil
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
		if err := decodeRedisTask(&tasks[len(tasks)-1], []byte(body), []byte(arts), q.IncludeArtifacts); err != nil {
			return nil, err
		}
	}
	return tasks, nil
}
