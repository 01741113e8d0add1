package store

import (
	"context"
	"testing"
	"time"
)

// RPC-18, SQLite specifics (the store-generic semantics are
// TestSentMessagesConformance): a claim answered from memory before its
// commit is committed, and read back after a reopen.
func TestSQLiteSentMessages(t *testing.T) {
	s, path := newTestStore(t)
	ctx := context.Background()
	now := time.Now()
	since := now.Add(-time.Minute)
	first := SentMessage{Owner: "alice", MessageID: "m1", Target: "context:", TaskID: "t1", StartSeq: 3, BodyHash: "h1", At: now}
	if prior, err := s.ClaimMessage(ctx, first, since); err != nil || prior != nil {
		t.Fatalf("first claim: %+v, %v", prior, err)
	}
	again := first
	again.TaskID, again.BodyHash = "t2", "h2"
	prior, err := s.ClaimMessage(ctx, again, since)
	if err != nil || prior == nil || prior.TaskID != "t1" || prior.BodyHash != "h1" {
		t.Fatalf("second claim (pending) returned %+v, %v; want the first", prior, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, path, SQLiteOptions{})
	prior, err = s.ClaimMessage(ctx, again, since)
	if err != nil || prior == nil || prior.TaskID != "t1" || prior.StartSeq != 3 || prior.At.UnixMilli() != now.UnixMilli() {
		t.Fatalf("claim after reopen returned %+v, %v; want the first", prior, err)
	}
}
