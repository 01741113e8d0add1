package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestRedisOldLayoutListed (issue 32): index entries written while the
// store kept a sorted set per context and state still list under both
// filters, and leave that set on their next write.
func TestRedisOldLayoutListed(t *testing.T) {
	s := newTestRedis(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	mustPut(t, s, "alice", mkTask("t1", "c1", a2a.TaskStateWorking, now))
	mustPut(t, s, "alice", mkTask("t2", "c1", a2a.TaskStateWorking, now.Add(time.Second)))
	// Rewrite t1's entry the way the previous layout wrote it.
	ix, base := s.ownerIx("alice"), s.ownerBase("alice")
	e, err := s.c.HGet(ctx, ix, "t1").Result()
	if err != nil || !strings.HasSuffix(e, "|") {
		t.Fatalf("new entry %q, %v: want a trailing |", e, err)
	}
	csKey := base + ":cs:c1:" + string(a2a.TaskStateWorking)
	s.c.HSet(ctx, ix, "t1", strings.TrimSuffix(e, "|"))
	s.c.ZAdd(ctx, csKey, redis.Z{Member: member(now.UnixMilli(), "t1")})

	res := mustList(t, s, ListQuery{Owner: "alice", ContextID: "c1", State: a2a.TaskStateWorking, Limit: 1})
	if res.Total != 2 || len(res.Tasks) != 1 || res.Tasks[0].ID != "t2" || res.Next == nil {
		t.Fatalf("first page: %+v", res)
	}
	res = mustList(t, s, ListQuery{Owner: "alice", ContextID: "c1", State: a2a.TaskStateWorking, Limit: 1, After: res.Next})
	if res.Total != 2 || len(res.Tasks) != 1 || res.Tasks[0].ID != "t1" || res.Next != nil {
		t.Fatalf("second page: %+v", res)
	}

	mustPut(t, s, "alice", mkTask("t1", "c1", a2a.TaskStateCompleted, now.Add(2*time.Second)))
	if n, _ := s.c.Exists(ctx, csKey).Result(); n != 0 {
		t.Fatalf("the old per context and state set is still there after the task's next write")
	}
	if e, _ := s.c.HGet(ctx, ix, "t1").Result(); !strings.HasSuffix(e, "|") {
		t.Fatalf("entry %q not migrated", e)
	}
	res = mustList(t, s, ListQuery{Owner: "alice", ContextID: "c1", State: a2a.TaskStateCompleted, Limit: 5})
	if res.Total != 1 || len(res.Tasks) != 1 || res.Tasks[0].ID != "t1" {
		t.Fatalf("completed: %+v", res)
	}
	res = mustList(t, s, ListQuery{Owner: "alice", ContextID: "c1", State: a2a.TaskStateWorking, Limit: 5})
	if res.Total != 1 || len(res.Tasks) != 1 || res.Tasks[0].ID != "t2" {
		t.Fatalf("working: %+v", res)
	}
}

// TestRedisContextStateWalk: a context with more tasks than one chunk of
// the walk lists its tasks of one state exactly, page by page.
func TestRedisContextStateWalk(t *testing.T) {
	s := newTestRedis(t)
	now := time.UnixMilli(1_700_000_000_000)
	want := 0
	for i := range 700 {
		st := a2a.TaskStateWorking
		if i%3 == 0 {
			st = a2a.TaskStateCompleted
			want++
		}
		mustPut(t, s, "bob", mkTask(fmt.Sprintf("t%04d", i), "c", st, now.Add(time.Duration(i)*time.Millisecond)))
	}
	q := ListQuery{Owner: "bob", ContextID: "c", State: a2a.TaskStateCompleted, Limit: 50}
	seen, last := 0, ""
	for {
		res := mustList(t, s, q)
		if res.Total != want {
			t.Fatalf("total %d, want %d", res.Total, want)
		}
		for _, task := range res.Tasks {
			if task.Status.State != a2a.TaskStateCompleted || (last != "" && task.ID >= last) {
				t.Fatalf("task %s in %s after %s", task.ID, task.Status.State, last)
			}
			last = task.ID
			seen++
		}
		if res.Next == nil {
			break
		}
		q.After = res.Next
	}
	if seen != want {
		t.Fatalf("walked %d tasks, want %d", seen, want)
	}
}
