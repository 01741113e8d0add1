package store

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// benchTask is a task of a realistic size (~1.5 KB of JSON): two history
// messages, a status message and one artifact.
func benchTask(id, ctxID string, state a2a.TaskState, ts time.Time) *a2a.Task {
	text := strings.Repeat("lorem ipsum dolor sit amet ", 12)
	return &a2a.Task{
		ID:        id,
		ContextID: ctxID,
		Status: a2a.TaskStatus{
			State:     state,
			Message:   &a2a.Message{MessageID: "s-" + id, ContextID: ctxID, TaskID: id, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart("working on it")}},
			Timestamp: a2a.Timestamp(ts),
		},
		History: []a2a.Message{
			{MessageID: "u-" + id, ContextID: ctxID, TaskID: id, Role: a2a.RoleUser, Parts: []a2a.Part{a2a.TextPart(text)}},
			{MessageID: "a-" + id, ContextID: ctxID, TaskID: id, Role: a2a.RoleAgent, Parts: []a2a.Part{a2a.TextPart(text)}},
		},
		Artifacts: []a2a.Artifact{{ArtifactID: "out", Name: "answer", Parts: []a2a.Part{a2a.TextPart(text + text)}}},
		Metadata:  map[string]any{"model": "bench", "tokens": 123.0},
	}
}

// benchPut measures PutTask throughput with 32 concurrent writers and
// durability full; maxBatch 1 commits every write on its own; serial syncs
// inside COMMIT (synchronous=FULL) instead of the pipelined WAL syncer.
func benchPut(b *testing.B, maxBatch int, serial bool) {
	s := openTest(b, filepath.Join(b.TempDir(), "a2a.db"), SQLiteOptions{Durability: DurabilityFull, maxBatch: maxBatch, serialSync: serial})
	tmpl := benchTask("", "ctx", a2a.TaskStateWorking, t0)
	var seq atomic.Int64
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((32 + procs - 1) / procs)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			task := *tmpl
			task.ID = fmt.Sprintf("t%09d", seq.Add(1))
			if err := s.PutTask(bg, "owner", &task); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	if n := s.w.nBatches.Load(); n > 0 {
		b.ReportMetric(float64(s.w.nRequests.Load())/float64(n), "writes/commit")
	}
	if s.w.sync != nil && b.N > 0 {
		b.ReportMetric(float64(b.N)/float64(max(1, s.w.sync.nSyncs.Load())), "writes/fsync")
	}
}

// BenchmarkPutTaskGroupCommit is PutTask from 32 goroutines with group
// commit and the pipelined WAL sync (the default).
func BenchmarkPutTaskGroupCommit(b *testing.B) { benchPut(b, 0, false) }

// BenchmarkPutTaskGroupCommitSerialSync is group commit with the sync inside
// COMMIT (synchronous=FULL): the baseline of the pipelined sync (issue 29).
func BenchmarkPutTaskGroupCommitSerialSync(b *testing.B) { benchPut(b, 0, true) }

// BenchmarkPutTaskSingleCommit is the baseline: one commit (and sync) per write.
func BenchmarkPutTaskSingleCommit(b *testing.B) { benchPut(b, 1, true) }

// fillBench stores n tasks of one owner (4 contexts, 3 states, distinct
// status times t0+i ms) plus n/10 of another owner.
func fillBench(b *testing.B, path string, n int) {
	s, err := OpenSQLite(path, SQLiteOptions{Durability: DurabilityNormal})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	states := []a2a.TaskState{a2a.TaskStateCompleted, a2a.TaskStateWorking, a2a.TaskStateInputRequired}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				owner := "o"
				if i >= n {
					owner = "other"
				}
				task := benchTask(fmt.Sprintf("t%09d", i), fmt.Sprintf("ctx-%d", i%4), states[i%3], t0.Add(time.Duration(i)*time.Millisecond))
				if err := s.PutTask(bg, owner, task); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	for i := range n + n/10 {
		work <- i
	}
	close(work)
	wg.Wait()
}

// BenchmarkListTasksPage lists a page of 50 (without artifacts) from 1k and
// 100k stored tasks: the first page, a page in the middle reached through
// a cursor, and the same with a state filter.
func BenchmarkListTasksPage(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		path := filepath.Join(b.TempDir(), "a2a.db")
		fillBench(b, path, n)
		s := openTest(b, path, SQLiteOptions{})
		// Task i has status time t0+i ms, so the list order is i descending.
		mid := &Cursor{StatusTime: t0.Add(time.Duration(n/2) * time.Millisecond), TaskID: fmt.Sprintf("t%09d", n/2)}
		for _, c := range []struct {
			name string
			q    ListQuery
		}{
			{"first", ListQuery{Owner: "o", Limit: 50}},
			{"deep", ListQuery{Owner: "o", Limit: 50, After: mid}},
			{"deep-state", ListQuery{Owner: "o", Limit: 50, After: mid, State: a2a.TaskStateWorking}},
		} {
			b.Run(fmt.Sprintf("tasks=%d/%s", n, c.name), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					res, err := s.ListTasks(bg, c.q)
					if err != nil {
						b.Fatal(err)
					}
					if len(res.Tasks) != 50 || res.Next == nil || res.Total < n/3 {
						b.Fatalf("page of %d, total %d", len(res.Tasks), res.Total)
					}
				}
			})
		}
	}
}
