package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// sameRedis opens a second store handle on s's Redis and key prefix: a
// second gateway instance.
func sameRedis(t *testing.T, s *Redis) *Redis {
	t.Helper()
	o, err := OpenRedis(context.Background(), RedisOptions{URLs: []string{"redis://" + redisAddr(t) + "/0"}, KeyPrefix: s.p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = o.Close() })
	return o
}

// TestRedisEventLogShared (RPC-17, SCALE-1): events appended on one
// instance are read by another at once (no task write between), the
// stream holds exactly keep entries under the task's hash tag, and a
// retried append adds no duplicate.
func TestRedisEventLogShared(t *testing.T) {
	a := newTestRedis(t)
	b := sameRedis(t, a)
	ctx := context.Background()
	if err := a.AppendEvents("t1", seqEvents(1, 6), 4); err != nil {
		t.Fatal(err)
	}
	if n, err := b.LastEventSeq(ctx, "t1"); err != nil || n != 6 {
		t.Fatalf("LastEventSeq on the other instance = %d, %v; want 6", n, err)
	}
	if evs, err := b.Events(ctx, "t1", 2); err != nil || fmt.Sprint(eventSeqs(evs)) != "[3 4 5 6]" {
		t.Fatalf("Events(2) on the other instance = %v, %v; want [3 4 5 6]", eventSeqs(evs), err)
	}
	// A retry of appended events (and an overlap) writes only the new one.
	if err := b.AppendEvents("t1", seqEvents(5, 7), 4); err != nil {
		t.Fatal(err)
	}
	key := a.eventsKey("t1")
	if key != a.p+"{t:t1}:ev" {
		t.Errorf("event log key %q is not under the task's hash tag", key)
	}
	if n, err := a.c.XLen(ctx, key).Result(); err != nil || n != 4 {
		t.Errorf("XLEN = %d, %v; want keep (4)", n, err)
	}
	if evs, err := a.Events(ctx, "t1", 3); err != nil || fmt.Sprint(eventSeqs(evs)) != "[4 5 6 7]" {
		t.Errorf("Events(3) after the retry = %v, %v; want [4 5 6 7]", eventSeqs(evs), err)
	}
	if err := a.AppendEvents("t1", []Event{{Seq: 0}}, 4); err == nil {
		t.Error("an event without a sequence number was accepted")
	}
}

// TestRedisClaimOnceAcrossInstances (RPC-18, SCALE-1): concurrent claims
// of one message id on several instances: exactly one records it, every
// other one gets that record; the record expires with its window.
func TestRedisClaimOnceAcrossInstances(t *testing.T) {
	first := newTestRedis(t)
	stores := []*Redis{first, sameRedis(t, first), sameRedis(t, first)}
	ctx := context.Background()
	now := time.Now()
	const n = 24
	var wg sync.WaitGroup
	var mu sync.Mutex
	winners := map[string]int{}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := SentMessage{Owner: "alice", MessageID: "m1", Target: "context:c", TaskID: fmt.Sprint("t", i), BodyHash: "h", At: now}
			prior, err := stores[i%len(stores)].ClaimMessage(ctx, m, now.Add(-time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				t.Error(err)
			case prior == nil:
				winners[m.TaskID]++
			default:
				winners["prior:"+prior.TaskID]++
			}
		}()
	}
	wg.Wait()
	var won string
	for k, v := range winners {
		if len(k) < 6 || k[:6] != "prior:" {
			if won != "" || v != 1 {
				t.Fatalf("more than one claim recorded: %v", winners)
			}
			won = k
		}
	}
	if won == "" || winners["prior:"+won] != n-1 {
		t.Fatalf("claims: %v; want one winner and %d answers naming it", winners, n-1)
	}
	key := first.sentKey("alice", "m1", "context:c")
	pttl, err := first.c.PTTL(ctx, key).Result()
	if err != nil || pttl <= 55*time.Second || pttl > time.Minute+sentMargin {
		t.Errorf("PTTL of the record = %v, %v; want about the window (1m) + %v", pttl, err, sentMargin)
	}
	if key != first.p+"{o:alice}:sent:m1:~"+b64("context:c") {
		t.Errorf("sent key %q: not under the owner's hash tag with escaped parts", key)
	}
}

// TestRedisEventsClosed: the EventStore and SentMessageStore methods fail
// with ErrClosed after Close.
func TestRedisEventsClosed(t *testing.T) {
	s := newTestRedis(t)
	_ = s.Close()
	ctx := context.Background()
	if err := s.AppendEvents("t", seqEvents(1, 1), 0); err != ErrClosed {
		t.Errorf("AppendEvents: %v", err)
	}
	if _, err := s.LastEventSeq(ctx, "t"); err != ErrClosed {
		t.Errorf("LastEventSeq: %v", err)
	}
	if _, err := s.Events(ctx, "t", 0); err != ErrClosed {
		t.Errorf("Events: %v", err)
	}
	if _, err := s.ClaimMessage(ctx, SentMessage{Owner: "o", MessageID: "m", At: time.Now()}, time.Now()); err != ErrClosed {
		t.Errorf("ClaimMessage: %v", err)
	}
	if err := s.ForgetMessage(ctx, "o", "m", ""); err != ErrClosed {
		t.Errorf("ForgetMessage: %v", err)
	}
}

// BenchmarkRedisAppendEvent: the cost one published event adds to a turn
// with store redis (one script round trip; the log trimmed at 1000).
func BenchmarkRedisAppendEvent(b *testing.B) {
	s := newTestRedis(b)
	ev := logEvent("a chunk of streamed output, about as long as a line of text")
	b.ResetTimer()
	for i := range b.N {
		if err := s.AppendEvents("bench", []Event{{Seq: uint64(i + 1), Response: ev}}, 1000); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisClaimMessage: the cost of one send's claim (RPC-18).
func BenchmarkRedisClaimMessage(b *testing.B) {
	s := newTestRedis(b)
	now := time.Now()
	b.ResetTimer()
	for i := range b.N {
		m := SentMessage{Owner: "alice", MessageID: fmt.Sprint("m", i), Target: "context:c", TaskID: "t", BodyHash: "h", At: now}
		if _, err := s.ClaimMessage(bg, m, now.Add(-time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRedisEventLogExpiresAfterTheEnd (RPC-17, issue 15): a task's event
// log in Redis has no expiry while the task runs (or waits for input) and
// expires event_log_ttl after the task reached a final state, whichever
// of the final write and the last append comes first; with a negative TTL
// it stays.
func TestRedisEventLogExpiresAfterTheEnd(t *testing.T) {
	ctx := context.Background()
	s := newTestRedis(t)
	s.evTTL = time.Minute
	pttl := func(id string) time.Duration {
		d, err := s.c.PTTL(ctx, s.eventsKey(id)).Result()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	now := time.Now()
	// Final write after the events.
	if err := s.PutTask(ctx, "alice", mkTask("a", "c", a2a.TaskStateWorking, now)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents("a", seqEvents(1, 3), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTask(ctx, "alice", mkTask("a", "c", a2a.TaskStateInputRequired, now)); err != nil {
		t.Fatal(err)
	}
	if d := pttl("a"); d != -1 {
		t.Fatalf("log of an interrupted task expires in %v; want no expiry", d)
	}
	if _, err := s.PutTaskWithJobs(ctx, "alice", mkTask("a", "c", a2a.TaskStateCompleted, now), nil); err != nil {
		t.Fatal(err)
	}
	if d := pttl("a"); d <= 0 || d > time.Minute {
		t.Fatalf("log of a completed task: PTTL %v; want within 1m", d)
	}
	// Events appended after the final write (the last event published
	// after the state was stored).
	if err := s.PutTask(ctx, "alice", mkTask("b", "c", a2a.TaskStateFailed, now)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents("b", seqEvents(1, 2), 0); err != nil {
		t.Fatal(err)
	}
	if d := pttl("b"); d <= 0 || d > time.Minute {
		t.Fatalf("log appended after the final write: PTTL %v; want within 1m", d)
	}
	// Kept (negative TTL).
	s.evTTL = -1
	if err := s.PutTask(ctx, "alice", mkTask("k", "c", a2a.TaskStateWorking, now)); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendEvents("k", seqEvents(1, 2), 0); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTask(ctx, "alice", mkTask("k", "c", a2a.TaskStateCompleted, now)); err != nil {
		t.Fatal(err)
	}
	if d := pttl("k"); d != -1 {
		t.Fatalf("event_log_ttl off: PTTL %v; want no expiry", d)
	}
}
