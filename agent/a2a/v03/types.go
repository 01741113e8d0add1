// Package v03 translates between A2A 0.3 and A2A 1.0 wire shapes (RPC-2,
// legacy_v03; TURN-9): method names, `kind`-discriminated parts and
// results, lower-case kebab task states, 0.3 push configs and the 0.3
// Agent Card. Both directions are here, so the JSON-RPC binding (serving
// 0.3 clients) and the `a2a` upstream backend (talking to 0.3 agents) use
// one translation. It imports only agent/a2a.
package v03

import "encoding/json"

// ProtocolVersion is the protocolVersion a 0.3 card declares.
const ProtocolVersion = "0.3.0"

// Kind discriminators of A2A 0.3.
const (
	KindText           = "text"
	KindFile           = "file"
	KindData           = "data"
	KindMessage        = "message"
	KindTask           = "task"
	KindStatusUpdate   = "status-update"
	KindArtifactUpdate = "artifact-update"
)

// Part is a 0.3 part: {"kind":"text","text"}, {"kind":"file","file":{…}}
// or {"kind":"data","data":{…}}.
type Part struct {
	// Kind is "text", "file" or "data".
	Kind string `json:"kind"`
	// Text is the content of a text part.
	Text *string `json:"text,omitempty"`
	// File is the content of a file part.
	File *File `json:"file,omitempty"`
	// Data is the content of a data part (a JSON object in 0.3).
	Data json.RawMessage `json:"data,omitempty"`
	// Metadata is free-form part metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// File is the file of a 0.3 file part: inline bytes or a URI.
type File struct {
	// Name is an optional file name.
	Name string `json:"name,omitempty"`
	// MimeType is the media type.
	MimeType string `json:"mimeType,omitempty"`
	// Bytes is the base64 content (FileWithBytes).
	Bytes string `json:"bytes,omitempty"`
	// URI references the content (FileWithUri).
	URI string `json:"uri,omitempty"`
}

// Message is a 0.3 message (kind "message", roles "user"/"agent").
type Message struct {
	// Kind is always "message".
	Kind string `json:"kind"`
	// MessageID identifies the message.
	MessageID string `json:"messageId"`
	// ContextID groups related tasks and messages.
	ContextID string `json:"contextId,omitempty"`
	// TaskID is the task the message belongs to.
	TaskID string `json:"taskId,omitempty"`
	// Role is "user" or "agent".
	Role string `json:"role"`
	// Parts is the content.
	Parts []Part `json:"parts"`
	// Metadata is free-form message metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Extensions lists extension URIs that apply to the message.
	Extensions []string `json:"extensions,omitempty"`
	// ReferenceTaskIDs lists tasks this message refers to.
	ReferenceTaskIDs []string `json:"referenceTaskIds,omitempty"`
}

// TaskStatus is a 0.3 task status (state "input-required", …).
type TaskStatus struct {
	// State is the kebab-case state.
	State string `json:"state"`
	// Message is an optional status message.
	Message *Message `json:"message,omitempty"`
	// Timestamp is the ISO 8601 time of the status.
	Timestamp string `json:"timestamp,omitempty"`
}

// Artifact is a 0.3 artifact.
type Artifact struct {
	// ArtifactID is unique within the task.
	ArtifactID string `json:"artifactId"`
	// Name is a human-readable name.
	Name string `json:"name,omitempty"`
	// Description is a human-readable description.
	Description string `json:"description,omitempty"`
	// Parts is the content.
	Parts []Part `json:"parts"`
	// Metadata is free-form artifact metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Extensions lists extension URIs that apply to the artifact.
	Extensions []string `json:"extensions,omitempty"`
}

// Task is a 0.3 task (kind "task").
type Task struct {
	// Kind is always "task".
	Kind string `json:"kind"`
	// ID identifies the task.
	ID string `json:"id"`
	// ContextID is the task's context.
	ContextID string `json:"contextId"`
	// Status is the current status.
	Status TaskStatus `json:"status"`
	// Artifacts are the outputs so far.
	Artifacts []Artifact `json:"artifacts,omitempty"`
	// History holds the task's messages, oldest first.
	History []Message `json:"history,omitempty"`
	// Metadata is free-form task metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// StatusUpdate is a 0.3 TaskStatusUpdateEvent (kind "status-update").
type StatusUpdate struct {
	// Kind is always "status-update".
	Kind string `json:"kind"`
	// TaskID and ContextID identify the task.
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
	// Status is the new status.
	Status TaskStatus `json:"status"`
	// Final marks the last event of a stream (a terminal or interrupted state).
	Final bool `json:"final"`
	// Metadata is free-form event metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ArtifactUpdate is a 0.3 TaskArtifactUpdateEvent (kind "artifact-update").
type ArtifactUpdate struct {
	// Kind is always "artifact-update".
	Kind string `json:"kind"`
	// TaskID and ContextID identify the task.
	TaskID    string `json:"taskId"`
	ContextID string `json:"contextId"`
	// Artifact is the artifact or chunk.
	Artifact Artifact `json:"artifact"`
	// Append appends the parts to the artifact sent before.
	Append bool `json:"append,omitempty"`
	// LastChunk marks the artifact's last chunk.
	LastChunk bool `json:"lastChunk,omitempty"`
	// Metadata is free-form event metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PushAuth is 0.3 PushNotificationAuthenticationInfo.
type PushAuth struct {
	// Schemes lists the accepted auth schemes (the first one is used).
	Schemes []string `json:"schemes"`
	// Credentials is the credential sent after the scheme.
	Credentials string `json:"credentials,omitempty"`
}

// PushConfig is a 0.3 PushNotificationConfig.
type PushConfig struct {
	// ID identifies the config within its task.
	ID string `json:"id,omitempty"`
	// URL is the callback.
	URL string `json:"url"`
	// Token is the notification token.
	Token string `json:"token,omitempty"`
	// Authentication is what the receiver expects.
	Authentication *PushAuth `json:"authentication,omitempty"`
}

// TaskPushConfig is a 0.3 TaskPushNotificationConfig.
type TaskPushConfig struct {
	// TaskID is the task.
	TaskID string `json:"taskId"`
	// PushNotificationConfig is the config.
	PushNotificationConfig PushConfig `json:"pushNotificationConfig"`
}

// SendConfig is 0.3 MessageSendConfiguration.
type SendConfig struct {
	// AcceptedOutputModes lists the media types the client accepts.
	AcceptedOutputModes []string `json:"acceptedOutputModes,omitempty"`
	// Blocking waits for a terminal or interrupted state (default true).
	Blocking *bool `json:"blocking,omitempty"`
	// HistoryLength bounds the returned history.
	HistoryLength *int32 `json:"historyLength,omitempty"`
	// PushNotificationConfig registers a push config on the task.
	PushNotificationConfig *PushConfig `json:"pushNotificationConfig,omitempty"`
}

// SendParams is 0.3 MessageSendParams (message/send, message/stream).
type SendParams struct {
	// Message is the message sent.
	Message *Message `json:"message"`
	// Configuration tunes the call.
	Configuration *SendConfig `json:"configuration,omitempty"`
	// Metadata is free-form request metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TaskQueryParams is the params of tasks/get.
type TaskQueryParams struct {
	// ID is the task id.
	ID string `json:"id"`
	// HistoryLength bounds the returned history.
	HistoryLength *int32 `json:"historyLength,omitempty"`
	// Metadata is free-form request metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// TaskIDParams is the params of tasks/cancel, tasks/resubscribe and
// tasks/pushNotificationConfig/list.
type TaskIDParams struct {
	// ID is the task id.
	ID string `json:"id"`
	// Metadata is free-form request metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// PushConfigParams is the params of tasks/pushNotificationConfig/get and
// delete.
type PushConfigParams struct {
	// ID is the task id.
	ID string `json:"id"`
	// PushNotificationConfigID is the config id (get: optional).
	PushNotificationConfigID string `json:"pushNotificationConfigId,omitempty"`
	// Metadata is free-form request metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}
