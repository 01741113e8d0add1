package store

import (
	"context"
	"time"
)

// DefaultEventLogSize is how many events the log of one task keeps when the
// caller does not say (event_log_size, RPC-17).
const DefaultEventLogSize = 1000

// EventStore keeps the bounded, per-task event log that resumable streams
// replay (RPC-17): every event of a task, across all of its turns, under a
// sequence number that strictly increases by one. It is optional: the
// runtime finds it in Capabilities.Events (SQLite implements it; Redis
// keeps a stream per task, P{t:<id>}:ev). Safe for concurrent
// use. Reads are by task id only: the caller has checked the task's owner.
type EventStore interface {
	// LastEventSeq returns the sequence number of the task's last event
	// (appended, whether written yet or not), 0 when it has none.
	LastEventSeq(ctx context.Context, taskID string) (uint64, error)
	// AppendEvents adds evs (ascending, continuing the task's log) to the
	// log and keeps only its last keep events (keep <= 0: DefaultEventLogSize).
	// The events are durable no later than the task's next durable write
	// (PutTask, PutTaskWithJobs) returns: SQLite writes them in that
	// write's transaction, together with the state they led to; a store
	// may also write them at once (Redis does, so other instances see
	// them). It does not block on I/O for long.
	AppendEvents(taskID string, evs []Event, keep int) error
	// Events returns the task's logged events with a sequence number above
	// after, ascending (none when after is the last one). It returns
	// ErrEventsGone when the log no longer holds (or never held) the event
	// after+1: the caller sends the task's snapshot instead.
	Events(ctx context.Context, taskID string, after uint64) ([]Event, error)
}

// SentMessage records one SendMessage or SendStreamingMessage for
// idempotent sends (RPC-18): a message id the same owner sent to the same
// target within the dedupe window starts no second turn.
type SentMessage struct {
	// Owner is the sending principal's owner id.
	Owner string
	// MessageID is the message's messageId.
	MessageID string
	// Target is what the message was sent to: "task:<id>" for a message
	// naming a task, else "context:<id>" ("context:" for neither).
	Target string
	// TaskID is the task the first send created or continued.
	TaskID string
	// StartSeq is the sequence number of the task's last event before the
	// first send's turn (0 for a new task): its stream replays from there.
	StartSeq uint64
	// BodyHash is a canonical hash of the message's content (role, parts,
	// metadata…); a resend under the same id must have the same hash.
	BodyHash string
	// At is when the first send was accepted.
	At time.Time
}

// SentMessageStore remembers sent message ids for RPC-18. It is optional
// (Capabilities.Sent; SQLite and Redis implement it). Safe for concurrent
// use; ClaimMessage is atomic per (Owner, MessageID, Target), also across
// instances sharing the store.
type SentMessageStore interface {
	// ClaimMessage records m unless a record of the same (Owner,
	// MessageID, Target) made at or after since exists: then it returns
	// that record, and m is not recorded. Records older than since may be
	// replaced and pruned.
	ClaimMessage(ctx context.Context, m SentMessage, since time.Time) (prior *SentMessage, err error)
	// ForgetMessage removes the record of a send that failed before its
	// turn started, so a retry runs.
	ForgetMessage(ctx context.Context, owner, messageID, target string) error
}
