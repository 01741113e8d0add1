package agent

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TurnRequest is what the gateway hands a backend for one turn. Its JSON
// form is the turn request line of the turn-event protocol.
type TurnRequest struct {
	V         int            `json:"v"`
	Type      string         `json:"type"`
	ContextID string         `json:"contextId"`
	TaskID    string         `json:"taskId"`
	MessageID string         `json:"messageId"`
	Cwd       string         `json:"cwd"`
	Prompt    string         `json:"prompt"`
	Message   *a2a.Message   `json:"message,omitempty"`
	Metadata  map[string]any `json:"metadata,omitempty"`
	// Session is the context's in-memory backend session; a backend may
	// keep conversation state there between turns. It starts nil for a new
	// (or evicted and revived) context.
	Session *Session `json:"-"`
}

// Session is per-context state a backend may keep between turns.
type Session struct {
	// Value is owned by the backend.
	Value any
}

// Emit sends one event of a running turn to the gateway. It returns an error
// when the turn can no longer accept events (for example, it was canceled).
type Emit func(Event) error

// Backend runs turns. RunTurn blocks until the turn ends; it must return
// promptly once ctx is done. Events are emitted in order; an end event
// (optional) says how the turn ended, otherwise a nil return means
// input_required and an error an internal failure.
type Backend interface {
	RunTurn(ctx context.Context, req *TurnRequest, emit Emit) error
}

// SessionCloser is implemented by backends that hold resources per context
// (a long-lived process); CloseSession is called when the context is evicted.
type SessionCloser interface {
	CloseSession(s *Session)
}
