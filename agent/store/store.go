// Package store defines, as narrow interfaces, what the agent runtime keeps
// and shares: tasks (TaskStore), contexts (ContextStore), push configs
// (PushConfigStore), the push outbox (Outbox) and the events of running
// turns (EventBus, EventLog). Each store says once, when it opens, which
// parts it has (Capabilities). It holds the embedded SQLite implementation
// of the stores (SQLite, and Deferred, opened later: OPS-6), the shared one
// (Redis) and the in-process event bus (LocalBus). It imports nothing from
// Caddy and nothing of agent.
package store

import (
	"context"
	"errors"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// ErrNotFound is returned when a record does not exist or belongs to
// another owner (callers must not be able to tell the two apart).
var ErrNotFound = errors.New("not found")

// ErrClosed is returned by every method after Close.
var ErrClosed = errors.New("store closed")

// Cursor is a keyset pagination position: the (status time, task id) of the
// last task of the previous page. The next page holds tasks strictly before
// it in the order status time descending, then id descending.
type Cursor struct {
	StatusTime time.Time
	TaskID     string
}

// ListQuery selects one page of an owner's tasks.
type ListQuery struct {
	// Owner is the principal whose tasks are listed. Required ("" is the
	// anonymous principal and is a valid owner).
	Owner string
	// ContextID keeps only tasks of this context when set.
	ContextID string
	// State keeps only tasks in this state when set.
	State a2a.TaskState
	// StatusAfter keeps tasks whose status time is at or after it, when non-zero.
	StatusAfter time.Time
	// After starts the page after this cursor; nil for the first page.
	After *Cursor
	// Limit is the page size (1..100 after the caller's validation).
	Limit int
	// IncludeArtifacts loads artifacts; when false the returned tasks have none.
	IncludeArtifacts bool
}

// ListResult is one page of tasks.
type ListResult struct {
	// Tasks is the page, status time descending, then id descending.
	Tasks []a2a.Task
	// Total counts every task matching the filters (ignoring the cursor).
	Total int
	// Next is the cursor of the next page, nil on the last page.
	Next *Cursor
}

// ContextRecord is the durable state of a conversation context.
type ContextRecord struct {
	// Owner is the principal that created the context.
	Owner string
	// ID is the context id.
	ID string
	// Cwd is the workspace the context is bound to ("" = server default).
	Cwd string
	// State is opaque backend conversation state (e.g. the chat history an
	// OpenAI backend keeps), nil when the backend keeps none.
	State []byte
	// CreatedAt and UpdatedAt are maintained by the caller.
	CreatedAt, UpdatedAt time.Time
}

// TaskStore persists tasks. Implementations are safe for concurrent use.
// Every task is owned by exactly one principal; reads with another owner
// behave as if the task did not exist (ErrNotFound, never another error).
// A write is visible to every later read of any caller (on any instance,
// for a shared store) once it returns.
type TaskStore interface {
	// PutTask inserts or replaces a task (status, history, artifacts,
	// metadata) owned by owner. The write is durable when it returns.
	PutTask(ctx context.Context, owner string, t *a2a.Task) error
	// GetTask returns the owner's task, or ErrNotFound.
	GetTask(ctx context.Context, owner, id string) (*a2a.Task, error)
	// ListTasks returns one page of the owner's tasks (RPC-9). Its cost
	// depends on the page size, not on how many tasks are stored; Total
	// counts the filtered tasks. Page tokens are the caller's concern: the
	// store only sees the decoded Cursor.
	ListTasks(ctx context.Context, q ListQuery) (ListResult, error)
	// FailInterrupted marks every task left SUBMITTED or WORKING (by a
	// process that died mid-turn) as TASK_STATE_FAILED with an agent status
	// message holding msg, stamped now (RPC-12). It returns how many were
	// changed. A store shared by several instances must restrict it to the
	// tasks of instances that are gone.
	FailInterrupted(ctx context.Context, msg string, now time.Time) (int, error)
}

// ContextStore persists conversation contexts (the workspace a context is
// bound to, INPUT-1, and the backend's conversation state). Safe for
// concurrent use; reads with another owner are ErrNotFound.
type ContextStore interface {
	// PutContext inserts or replaces a context record.
	PutContext(ctx context.Context, c ContextRecord) error
	// GetContext returns the owner's context record, or ErrNotFound.
	GetContext(ctx context.Context, owner, id string) (*ContextRecord, error)
}

// Store is the part of a store every runtime needs: tasks and contexts.
// The runtime (agent.Hub) is built over a store's Capabilities, which
// hold it with the optional parts (push, event log, sharing…).
type Store interface {
	TaskStore
	ContextStore
	// Close flushes pending writes and releases the store; every method
	// returns ErrClosed afterwards. The runtime never calls it: whoever
	// opened the store closes it, after the runtime.
	Close() error
}

// NoWaitWriter is implemented by stores that can queue a write without
// waiting for it to be durable. The agent uses it for intermediate task
// states and context records, which a later durable write supersedes or
// which are safe to lose in a crash. It is optional: without it the agent
// calls PutTask and PutContext.
type NoWaitWriter interface {
	// PutTaskNoWait queues PutTask; later writes of the caller apply after it.
	PutTaskNoWait(owner string, t *a2a.Task) error
	// PutContextNoWait queues PutContext.
	PutContextNoWait(c ContextRecord) error
}

var (
	_ Store        = (*SQLite)(nil)
	_ NoWaitWriter = (*SQLite)(nil)
)
