package store

import (
	"context"
	"testing"
	"time"
)

// RPC-18: a claim of a (owner, messageId, target) already claimed within
// the window returns the first claim, before and after it is committed and
// after a reopen; other owners, targets and expired claims are new; a
// forgotten claim is new again.
func TestSQLiteSentMessages(t *testing.T) {
	s, path := newTestStore(t)
	ctx := context.Background()
	now := time.Now()
	since := now.Add(-time.Minute)
	first := SentMessage{Owner: "alice", MessageID: "m1", Target: "context:", TaskID: "t1", StartSeq: 0, BodyHash: "h1", At: now}
	if prior, err := s.ClaimMessage(ctx, first, since); err != nil || prior != nil {
		t.Fatalf("first claim: %+v, %v", prior, err)
	}
	again := first
	again.TaskID, again.BodyHash = "t2", "h2"
	prior, err := s.ClaimMessage(ctx, again, since)
	if err != nil || prior == nil || prior.TaskID != "t1" || prior.BodyHash != "h1" {
		t.Fatalf("second claim (pending) returned %+v, %v; want the first", prior, err)
	}
	for _, m := range []SentMessage{
		{Owner: "bob", MessageID: "m1", Target: "context:", TaskID: "t3", At: now},
		{Owner: "alice", MessageID: "m1", Target: "task:t9", TaskID: "t9", At: now},
	} {
		if prior, err := s.ClaimMessage(ctx, m, since); err != nil || prior != nil {
			t.Errorf("claim %+v: %+v, %v; want a new claim", m, prior, err)
		}
	}
	// Committed and read back after a reopen.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, SQLiteOptions{})
	prior, err = s.ClaimMessage(ctx, again, since)
	if err != nil || prior == nil || prior.TaskID != "t1" || prior.StartSeq != 0 || prior.At.UnixMilli() != now.UnixMilli() {
		t.Fatalf("claim after reopen returned %+v, %v; want the first", prior, err)
	}
	// Past the window the id is new (and replaces the old record).
	if prior, err := s.ClaimMessage(ctx, again, now.Add(time.Second)); err != nil || prior != nil {
		t.Errorf("claim after the window: %+v, %v; want a new claim", prior, err)
	}
	if err := s.ForgetMessage(ctx, "alice", "m1", "context:"); err != nil {
		t.Fatal(err)
	}
	if prior, err := s.ClaimMessage(ctx, first, since); err != nil || prior != nil {
		t.Errorf("claim after ForgetMessage: %+v, %v; want a new claim", prior, err)
	}
}
