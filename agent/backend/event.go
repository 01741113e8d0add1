package backend

import "encoding/json"

// EventVersion is the version of the turn-event protocol this gateway speaks.
const EventVersion = 1

// Event types of the turn-event protocol (Appendix A of the specification).
const (
	EventText       = "text"
	EventMessage    = "message"
	EventTool       = "tool"
	EventPermission = "permission"
	EventThinking   = "thinking"
	EventUsage      = "usage"
	EventArtifact   = "artifact"
	EventEnd        = "end"
)

// Turn outcomes carried by an end event.
const (
	OutcomeInputRequired = "input_required"
	OutcomeCompleted     = "completed"
	OutcomeFailed        = "failed"
	OutcomeRejected      = "rejected"
	OutcomeCanceled      = "canceled"
)

// Error kinds of an end event's error.
const (
	ErrorKindTransient = "transient"
	ErrorKindAuth      = "auth"
	ErrorKindInternal  = "internal"
)

// Event is one line of the turn-event protocol, emitted by a backend while
// it runs a turn. Which fields are meaningful depends on Type.
type Event struct {
	// V is the protocol version (1).
	V int `json:"v"`
	// Type is one of the Event* constants; unknown types are ignored.
	Type string `json:"type"`

	// Text is assistant text (text, message, thinking) or the final answer (end).
	Text string `json:"text,omitempty"`

	// Status is the tool progress: started, input_delta, input_complete,
	// progress, completed or failed.
	Status string `json:"status,omitempty"`
	// ToolUseID correlates the events of one tool use.
	ToolUseID string `json:"toolUseId,omitempty"`
	// Name is the tool name (tool) or the artifact name (artifact).
	Name string `json:"name,omitempty"`
	// Input is the complete tool input.
	Input json.RawMessage `json:"input,omitempty"`
	// Delta is a partial tool input.
	Delta string `json:"delta,omitempty"`
	// Result is the tool result.
	Result json.RawMessage `json:"result,omitempty"`

	// ToolName and AutoApproved describe a permission decision.
	ToolName     string `json:"toolName,omitempty"`
	AutoApproved *bool  `json:"autoApproved,omitempty"`

	// Token usage of the turn.
	InputTokens  int64 `json:"inputTokens,omitempty"`
	OutputTokens int64 `json:"outputTokens,omitempty"`
	TotalTokens  int64 `json:"totalTokens,omitempty"`

	// Artifact fields: ArtifactID, Name, then Parts (inline) or a payload
	// (MediaType, Filename and Text or Base64).
	ArtifactID string          `json:"artifactId,omitempty"`
	Parts      json.RawMessage `json:"parts,omitempty"`
	MediaType  string          `json:"mediaType,omitempty"`
	Filename   string          `json:"filename,omitempty"`
	Base64     string          `json:"base64,omitempty"`
	Append     bool            `json:"append,omitempty"`
	LastChunk  bool            `json:"lastChunk,omitempty"`

	// Outcome is how the turn ended (end).
	Outcome string `json:"outcome,omitempty"`
	// Error describes a failure (tool failed, or end); its message is
	// logged, never shown to the client.
	Error *EventError `json:"error,omitempty"`
}

// EventError is the error object of a tool or end event.
type EventError struct {
	// Kind is transient, auth or internal.
	Kind string `json:"kind,omitempty"`
	// Message is for the log only.
	Message string `json:"message,omitempty"`
}
