package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// The filter of recorded message ids (issue 17) never says "absent" for a
// key it holds, in any kept generation; records older than what it keeps,
// or made before the store opened, always send the claim to the database.
func TestSentFilter(t *testing.T) {
	t0 := time.UnixMilli(1_000_000_000_000)
	f := newSentFilter(0, t0)
	window := 10 * time.Minute
	if f.mayHold("k1", t0.Add(-window), t0) {
		t.Fatal("an empty filter (fresh database) holds k1")
	}
	f.add("k1", t0)
	at := t0
	for i := range 4 * sentGens { // through every generation and past the oldest
		at = t0.Add(time.Duration(i) * sentGenSpan / 2)
		since := at.Add(-window)
		got := f.mayHold("k1", since, at)
		if !since.After(t0) && !got {
			t.Fatalf("at +%v (window from %v) the filter lost k1", at.Sub(t0), since.Sub(t0))
		}
	}
	// Long after k1, a window that starts after it may skip the read.
	late := t0.Add(sentGenSpan * (sentGens + 2))
	if f.mayHold("k1", late.Add(-time.Minute), late) {
		t.Fatal("k1, recorded long before the window, still sends claims to the database")
	}

	// A database with records from before the store opened: every window
	// that reaches back to them reads the database.
	g := newSentFilter(t0.UnixMilli(), t0.Add(time.Second))
	if !g.mayHold("old", t0.Add(-window), t0.Add(time.Second)) {
		t.Fatal("a key possibly recorded before the store opened skipped the database")
	}
	if g.mayHold("old", t0.Add(time.Millisecond), t0.Add(2*time.Second)) {
		t.Fatal("a window after every stored record read the database")
	}

	// Idle for longer than every generation: what it held still reads.
	h := newSentFilter(0, t0)
	h.add("k2", t0)
	idle := t0.Add(sentGenSpan * (sentGens + 1))
	if !h.mayHold("k2", t0, idle) {
		t.Fatal("after an idle spell the filter lost k2 within its window")
	}

	// False positives only: many keys, none lost.
	m := newSentFilter(0, t0)
	for i := range 10000 {
		m.add(fmt.Sprint("key-", i), t0)
	}
	fp := 0
	for i := range 10000 {
		if !m.mayHold(fmt.Sprint("key-", i), t0, t0) {
			t.Fatalf("key-%d lost", i)
		}
		if m.mayHold(fmt.Sprint("other-", i), t0, t0) {
			fp++
		}
	}
	if fp > 100 {
		t.Fatalf("%d false positives in 10000 at a tiny load", fp)
	}
}

// A new message id costs a claim no database read; a resent one is still
// found, before and after a reopen (the newest stored record keeps the
// reopened store reading until the window has passed it).
func TestSQLiteSentSkipsReads(t *testing.T) {
	s, path := newTestStore(t)
	ctx := context.Background()
	now := time.Now()
	since := now.Add(-time.Minute)
	for i := range 50 {
		m := SentMessage{Owner: "alice", MessageID: fmt.Sprint("m", i), Target: "context:", TaskID: fmt.Sprint("t", i), BodyHash: "h", At: now}
		if prior, err := s.ClaimMessage(ctx, m, since); err != nil || prior != nil {
			t.Fatalf("claim %d: %+v, %v", i, prior, err)
		}
	}
	if n := s.nSentReads.Load(); n > 2 {
		t.Fatalf("50 new message ids read the database %d times", n)
	}
	m7 := SentMessage{Owner: "alice", MessageID: "m7", Target: "context:", TaskID: "other", BodyHash: "h", At: now}
	if prior, err := s.ClaimMessage(ctx, m7, since); err != nil || prior == nil || prior.TaskID != "t7" {
		t.Fatalf("resent m7 returned %+v, %v; want task t7", prior, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, SQLiteOptions{})
	if prior, err := s.ClaimMessage(ctx, m7, since); err != nil || prior == nil || prior.TaskID != "t7" {
		t.Fatalf("resent m7 after reopen returned %+v, %v; want task t7", prior, err)
	}
	if s.nSentReads.Load() != 1 {
		t.Fatalf("the reopened store read the database %d times for one claim", s.nSentReads.Load())
	}
}
