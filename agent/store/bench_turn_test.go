package store

import (
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// cpuNow is the process's user+system CPU time.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkTurnWrites is the store's share of one streamed turn in a new
// context, from 32 goroutines, synchronous=FULL: the context record
// (queued), SUBMITTED (queued), then the final state with the turn's
// events (durable). cpu-µs/op is the process CPU per turn, less sensitive
// to a shared machine than ns/op (issue 17).
func BenchmarkTurnWrites(b *testing.B) {
	s := openTest(b, filepath.Join(b.TempDir(), "a2a.db"), SQLiteOptions{})
	var seq atomic.Int64
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((32 + procs - 1) / procs)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuNow()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n := seq.Add(1)
			id, ctxID := fmt.Sprintf("t%09d", n), fmt.Sprintf("c%09d", n)
			now := time.Now()
			if err := s.PutContextNoWait(ContextRecord{Owner: "owner", ID: ctxID, Cwd: "/w", CreatedAt: now, UpdatedAt: now}); err != nil {
				b.Error(err)
				return
			}
			task := benchTask(id, ctxID, a2a.TaskStateSubmitted, now)
			task.Artifacts = nil
			if err := s.AppendEvents(id, []Event{{Seq: 1, Response: a2a.StreamResponse{Task: task}}}, 0); err != nil {
				b.Error(err)
				return
			}
			if err := s.PutTaskNoWait("owner", task); err != nil {
				b.Error(err)
				return
			}
			done := benchTask(id, ctxID, a2a.TaskStateInputRequired, now.Add(time.Millisecond))
			evs := make([]Event, 0, 5)
			for i := range 4 {
				evs = append(evs, Event{Seq: uint64(2 + i), Response: a2a.StreamResponse{StatusUpdate: &a2a.TaskStatusUpdateEvent{
					TaskID: id, ContextID: ctxID, Status: done.Status}}})
			}
			if err := s.AppendEvents(id, evs, 0); err != nil {
				b.Error(err)
				return
			}
			if err := s.PutTask(bg, "owner", done); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(cpuNow()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	if n := s.w.nBatches.Load(); n > 0 {
		b.ReportMetric(float64(s.w.nRequests.Load())/float64(n), "writes/commit")
		b.ReportMetric(float64(s.w.nCoalesced.Load())/float64(b.N), "coalesced/op")
	}
}
