package store

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// fillRedis stores n tasks of owner o (4 contexts, 2 states) in batches
// through the same scripts PutTask uses.
func fillRedis(b *testing.B, s *Redis, n int) {
	b.Helper()
	const batch = 500
	for i := 0; i < n; i += batch {
		_, err := s.c.Pipelined(bg, func(p redis.Pipeliner) error {
			for j := i; j < min(i+batch, n); j++ {
				st := a2a.TaskStateCompleted
				if j%2 == 0 {
					st = a2a.TaskStateInputRequired
				}
				t := benchTask(fmt.Sprintf("t%07d", j), fmt.Sprint("c", j%4), st, t0.Add(timeMS(j)))
				e, err := encodeTask(t)
				if err != nil {
					return err
				}
				// The keys and arguments of PutTask's standalone path (redis_tasks.go).
				putIndexedScript.Eval(bg, p, []string{s.taskKey(e.id), s.ownerIx("o")},
					"o", e.contextID, e.state, e.statusMS, e.body, e.arts,
					e.id, keyPart(e.contextID), member(e.statusMS, e.id), s.ownerBase("o"), s.logTTL(t), "", "", "")
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisListTasks: a ListTasks page (50 tasks, a context filter,
// a cursor deep in the set) costs the same at 1k and 50k stored tasks
// (RPC-9, SCALE-1).
func BenchmarkRedisListTasks(b *testing.B) {
	for _, n := range []int{1000, 50000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			s := newTestRedis(b)
			fillRedis(b, s, n)
			q := ListQuery{Owner: "o", ContextID: "c1", Limit: 50}
			first, err := s.ListTasks(bg, q)
			if err != nil || first.Total != n/4 {
				b.Fatalf("total %d, want %d (%v)", first.Total, n/4, err)
			}
			q.After = first.Next
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				res, err := s.ListTasks(bg, q)
				if err != nil || len(res.Tasks) != 50 {
					b.Fatalf("page: %d %v", len(res.Tasks), err)
				}
			}
		})
	}
}

func timeMS(n int) time.Duration { return time.Duration(n) * time.Millisecond }
