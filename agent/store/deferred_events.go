package store

import (
	"context"
	"time"
)

// The optional EventStore (RPC-17) and SentMessageStore (RPC-18) of the
// store behind a Deferred: a store without them keeps no event log (every
// resume gets the task's snapshot) and remembers no sent message.

var (
	_ EventStore       = (*Deferred)(nil)
	_ SentMessageStore = (*Deferred)(nil)
)

// LastEventSeq forwards to the open store.
func (d *Deferred) LastEventSeq(ctx context.Context, taskID string) (uint64, error) {
	s, err := d.get(ctx)
	if err != nil {
		return 0, err
	}
	if es, ok := s.(EventStore); ok {
		return es.LastEventSeq(ctx, taskID)
	}
	return 0, nil
}

// AppendEvents forwards to the open store (ErrNotOpen before Open).
func (d *Deferred) AppendEvents(taskID string, evs []Event, keep int) error {
	s, err := d.now()
	if err != nil {
		return err
	}
	if es, ok := s.(EventStore); ok {
		return es.AppendEvents(taskID, evs, keep)
	}
	return nil
}

// Events forwards to the open store.
func (d *Deferred) Events(ctx context.Context, taskID string, after uint64) ([]Event, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	if es, ok := s.(EventStore); ok {
		return es.Events(ctx, taskID, after)
	}
	return nil, ErrEventsGone
}

// ClaimMessage forwards to the open store.
func (d *Deferred) ClaimMessage(ctx context.Context, m SentMessage, since time.Time) (*SentMessage, error) {
	s, err := d.get(ctx)
	if err != nil {
		return nil, err
	}
	if ss, ok := s.(SentMessageStore); ok {
		return ss.ClaimMessage(ctx, m, since)
	}
	return nil, nil
}

// ForgetMessage forwards to the open store.
func (d *Deferred) ForgetMessage(ctx context.Context, owner, messageID, target string) error {
	s, err := d.get(ctx)
	if err != nil {
		return err
	}
	if ss, ok := s.(SentMessageStore); ok {
		return ss.ForgetMessage(ctx, owner, messageID, target)
	}
	return nil
}
