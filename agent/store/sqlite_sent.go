package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Sent message ids in SQLite (RPC-18). A claim is checked and recorded in
// memory under one lock (atomic in this process, the only writer of the
// database), and written by a queued write that rides the writer's next
// group commit: a send pays at most one indexed read, not a transaction,
// and no read when the filter of recorded ids (sqlite_sent_filter.go) says
// the id is new.

const getSentSQL = `SELECT task_id, start_seq, body_hash, created_ms FROM sent_messages
WHERE owner = ? AND message_id = ? AND target = ? AND created_ms >= ?`

var _ SentMessageStore = (*SQLite)(nil)

// sentPruneEvery is how often claims prune the records past their window.
const sentPruneEvery = time.Second

// sentClaims holds the claims not committed yet.
type sentClaims struct {
	mu        sync.Mutex
	pending   map[string]*sentClaim
	lastPrune time.Time
}

// sentClaim is a claim being checked or waiting for its commit. A claim of
// the same key meanwhile waits for ready and answers with winner.
type sentClaim struct {
	ready  chan struct{} // closed once the database was checked
	winner SentMessage   // the record that holds the key (set before ready)
}

func sentKey(owner, messageID, target string) string {
	return owner + "\x00" + messageID + "\x00" + target
}

// ClaimMessage implements SentMessageStore. The database is read without
// the claims' lock: a concurrent claim of the same key waits for the
// first one's answer instead.
func (s *SQLite) ClaimMessage(ctx context.Context, m SentMessage, since time.Time) (*SentMessage, error) {
	if s.closed.Load() {
		return nil, ErrClosed
	}
	key := sentKey(m.Owner, m.MessageID, m.Target)
	c := &s.sent
	c.mu.Lock()
	if p, ok := c.pending[key]; ok {
		c.mu.Unlock()
		select {
		case <-p.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !p.winner.At.Before(since) {
			w := p.winner
			return &w, nil
		}
		return s.ClaimMessage(ctx, m, since) // an expired claim: try again
	}
	if c.pending == nil {
		c.pending = map[string]*sentClaim{}
	}
	own := &sentClaim{ready: make(chan struct{}), winner: m}
	c.pending[key] = own
	c.mu.Unlock()

	var prior *SentMessage
	var err error
	if s.sentSeen.mayHold(key, since, time.Now()) {
		s.nSentReads.Add(1)
		prior, err = s.readSent(ctx, m, since)
	}
	if err != nil || prior != nil {
		if prior != nil {
			own.winner = *prior
		}
		close(own.ready)
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
		return prior, err
	}
	close(own.ready)
	return nil, s.recordSent(c, key, own, m, since)
}

// openSentFilter starts the filter of recorded message ids from the
// newest record already stored.
func (s *SQLite) openSentFilter(ctx context.Context) error {
	var last sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, `SELECT MAX(created_ms) FROM sent_messages`).Scan(&last); err != nil {
		return fmt.Errorf("reading sent messages: %w", err)
	}
	s.sentSeen = newSentFilter(last.Int64, time.Now())
	return nil
}

// readSent returns the record of m's key made at or after since, if any.
func (s *SQLite) readSent(ctx context.Context, m SentMessage, since time.Time) (*SentMessage, error) {
	prior := SentMessage{Owner: m.Owner, MessageID: m.MessageID, Target: m.Target}
	var seq, at int64
	err := s.getSent.QueryRowContext(ctx, m.Owner, m.MessageID, m.Target, since.UnixMilli()).Scan(&prior.TaskID, &seq, &prior.BodyHash, &at)
	switch {
	case err == nil:
		prior.StartSeq, prior.At = uint64(seq), time.UnixMilli(at).UTC()
		return &prior, nil
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	}
	return nil, s.readErr(fmt.Errorf("reading sent messages: %w", err))
}

// recordSent queues the write of claim own (m) and, at most every
// sentPruneEvery, the pruning of records older than since; the claim
// leaves the pending set once the write is done.
func (s *SQLite) recordSent(c *sentClaims, key string, own *sentClaim, m SentMessage, since time.Time) error {
	prune := int64(0)
	c.mu.Lock()
	if now := time.Now(); now.Sub(c.lastPrune) >= sentPruneEvery {
		c.lastPrune, prune = now, since.UnixMilli()
	}
	c.mu.Unlock()
	r := getReq(context.Background(), opFunc)
	r.fn = func(w *writer, _ int64) (int, error) {
		if _, err := w.exec(`INSERT INTO sent_messages (owner, message_id, target, task_id, start_seq, body_hash, created_ms)
VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (owner, message_id, target) DO UPDATE SET task_id = excluded.task_id,
	start_seq = excluded.start_seq, body_hash = excluded.body_hash, created_ms = excluded.created_ms`,
			m.Owner, m.MessageID, m.Target, m.TaskID, int64(m.StartSeq), m.BodyHash, m.At.UnixMilli()); err != nil {
			return 0, fmt.Errorf("recording sent message: %w", err)
		}
		if prune > 0 {
			if _, err := w.exec(`DELETE FROM sent_messages WHERE created_ms < ?`, prune); err != nil {
				return 0, fmt.Errorf("pruning sent messages: %w", err)
			}
		}
		return 1, nil
	}
	unpend := func(error) {
		c.mu.Lock()
		if c.pending[key] == own {
			delete(c.pending, key)
		}
		c.mu.Unlock()
	}
	r.after = unpend
	s.sentSeen.add(key, time.Now()) // before the record can be read (and the claim leaves pending)
	r.noTasks = true                // coalescing looks past it (writer_coalesce.go)
	if err := s.enqueue(r); err != nil {
		unpend(err)
		return err
	}
	return nil
}

// ForgetMessage implements SentMessageStore.
func (s *SQLite) ForgetMessage(ctx context.Context, owner, messageID, target string) error {
	if s.closed.Load() {
		return ErrClosed
	}
	c := &s.sent
	c.mu.Lock()
	delete(c.pending, sentKey(owner, messageID, target))
	c.mu.Unlock()
	_, err := s.do(ctx, func(w *writer, _ int64) (int, error) {
		n, err := w.exec(`DELETE FROM sent_messages WHERE owner = ? AND message_id = ? AND target = ?`, owner, messageID, target)
		return int(n), err
	})
	return err
}
