package backend

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TurnRequest is what the gateway hands a backend for one turn. Its JSON
// form is the turn request line of the turn-event protocol (Appendix A).
type TurnRequest struct {
	// V is the protocol version (EventVersion).
	V int `json:"v"`
	// Type is "turn".
	Type string `json:"type"`
	// ContextID, TaskID and MessageID identify the turn's context, task and
	// the user message that started it.
	ContextID string `json:"contextId"`
	TaskID    string `json:"taskId"`
	MessageID string `json:"messageId"`
	// Cwd is the task's workspace (INPUT-1).
	Cwd string `json:"cwd"`
	// Prompt is the message's text followed by the attachment manifest.
	Prompt string `json:"prompt"`
	// Attachments is the manifest of the message's multimodal parts
	// (INPUT-2); their entries are also listed at the end of Prompt.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Message is the user message that started the turn.
	Message *a2a.Message `json:"message,omitempty"`
	// Metadata is the message's metadata.<ns> object.
	Metadata map[string]any `json:"metadata,omitempty"`
	// TraceParent is the W3C traceparent of the turn's span when the
	// gateway traces the request (OPS-4), so an agent can continue the
	// trace; omitted otherwise.
	TraceParent string `json:"traceparent,omitempty"`
	// Credentials are the per-request credential keys of metadata.<ns>
	// (agent.Config.SensitiveMetadataKeys) that the gateway removed from the
	// stored message; they reach the backend only. Never log them.
	Credentials map[string]any `json:"credentials,omitempty"`
	// Text is the text part of the prompt, without the attachment manifest
	// (for backends that hand attachments over natively, e.g. vision).
	Text string `json:"-"`
	// Session is the context's in-memory backend session; a backend may
	// keep conversation state there between turns. It starts nil for a new
	// (or evicted and revived) context.
	Session *Session `json:"-"`
}

// Session is per-context state a backend may keep between turns.
type Session struct {
	// Value is owned by the backend.
	Value any
	// State is durable backend state (e.g. a chat history): loaded from the
	// context record when the context is revived, and stored with it after
	// a turn that changed it. Keep it small; it is rewritten every turn.
	State []byte
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

// Attachment is one manifest entry of the turn request: a multimodal part
// of the message (INPUT-2).
type Attachment struct {
	// Part is the index of the part in the message.
	Part int `json:"part"`
	// Filename is the part's file name (or the file URL's base name).
	Filename string `json:"filename,omitempty"`
	// MediaType is the part's media type without parameters.
	MediaType string `json:"mediaType"`
	// ByteSize is the size of the content in bytes.
	ByteSize int64 `json:"byteSize"`
	// SHA256 is the hex SHA-256 of the content.
	SHA256 string `json:"sha256"`
	// Source is raw, data or file.
	Source string `json:"source"`
	// Path is where the backend can read the bytes: the stored input under
	// the data dir for raw/data parts, the resolved file for file parts.
	// Empty when the gateway has no input directory.
	Path string `json:"path,omitempty"`

	// Data holds the bytes of a raw or data attachment.
	Data []byte `json:"-"`
}
