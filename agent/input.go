package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// validateMessage checks the shape of a client message (before any task
// exists) and returns the first problem as an A2A error.
func validateMessage(m *a2a.Message) error {
	if m == nil {
		return a2a.ErrInvalidParams("message", "is required")
	}
	if m.MessageID == "" {
		return a2a.ErrInvalidParams("message.messageId", "is required")
	}
	if m.Role != a2a.RoleUser {
		return a2a.ErrInvalidParams("message.role", "must be ROLE_USER")
	}
	if len(m.Parts) == 0 {
		return a2a.ErrInvalidParams("message.parts", "must hold at least one part")
	}
	if m.ContextID != "" {
		if err := checkID("message.contextId", m.ContextID); err != nil {
			return err
		}
	}
	if m.TaskID != "" {
		if err := checkID("message.taskId", m.TaskID); err != nil {
			return err
		}
	}
	for i, p := range m.Parts {
		if p.Kind() == "" {
			return a2a.ErrInvalidParams(fmt.Sprintf("message.parts[%d]", i), "must hold exactly one of text, raw, url or data")
		}
	}
	return nil
}

// Default input limits (INPUT-2).
const (
	// DefaultMaxTextBytes bounds a data part, a raw text part and a file://
	// text file turned into prompt text.
	DefaultMaxTextBytes = 1 << 20
	// DefaultMaxInlineBytes bounds a multimodal raw or data part.
	DefaultMaxInlineBytes = 5 << 20
	// DefaultMaxFileBytes bounds a multimodal file:// part.
	DefaultMaxFileBytes = 25 << 20
)

// InputLimits says which parts a message may carry and how big they may be
// (INPUT-2). Zero fields take the defaults.
type InputLimits struct {
	// MaxTextBytes bounds data parts (as sent), raw text parts and file://
	// text files. Default 1 MiB.
	MaxTextBytes int64
	// MaxInlineBytes bounds multimodal raw and data parts (decoded bytes).
	// Default 5 MiB.
	MaxInlineBytes int64
	// MaxFileBytes bounds multimodal file:// parts. Default 25 MiB.
	MaxFileBytes int64
	// TextTypes are extra media types read as prompt text, besides text/*,
	// JSON, YAML, TOML and XML. A trailing "/*" matches a whole type.
	TextTypes []string
	// MediaTypes are the multimodal media types accepted as attachments.
	// Default: image/* and audio/*.
	MediaTypes []string
}

// withDefaults returns l with zero fields set to the defaults.
func (l InputLimits) withDefaults() InputLimits {
	if l.MaxTextBytes <= 0 {
		l.MaxTextBytes = DefaultMaxTextBytes
	}
	if l.MaxInlineBytes <= 0 {
		l.MaxInlineBytes = DefaultMaxInlineBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = DefaultMaxFileBytes
	}
	if len(l.MediaTypes) == 0 {
		l.MediaTypes = DefaultAttachmentTypes()
	}
	return l
}

// turnInput is what a message's parts become: prompt text and attachments.
type turnInput struct {
	text        string // the text parts joined
	attachments []backend.Attachment
	credentials map[string]any
	baseURL     string // of the request that started the turn, for artifact URLs
	// newContext says the gateway minted the turn's context id just now
	// (a first message without a contextId): no record can exist, so the
	// turn does not read the store for it.
	newContext bool
	// cwd is the resolved workspace, checked once for file URLs and the
	// turn alike (INPUT-1): metadata.<ns>.cwd, else the context's bound
	// one, else the default. badCwd says it was not acceptable, otherCwd
	// that the message named another workspace than its context's;
	// cwdGiven that the message named one; readFiles that file URLs were
	// read against cwd.
	cwd       string
	badCwd    bool
	otherCwd  bool
	cwdGiven  bool
	readFiles bool
}

// hasInput reports whether the message holds non-blank text or an attachment.
func (in *turnInput) hasInput() bool {
	return strings.TrimSpace(in.text) != "" || len(in.attachments) > 0
}

// prepareInput builds the turn input of a client message: prompt text and
// attachments (file URLs checked against the message's workspace), the
// per-request credentials (the caller sets the base URL for artifact links).
//
// The workspace (INPUT-1): metadata.<ns>.cwd when the message gives one;
// else the workspace the context is bound to (bound, when isBound); else
// the default. A given cwd that differs from the bound one sets otherCwd,
// an unacceptable one (or a binding no longer acceptable) badCwd; file
// URLs are then refused.
func (s *Service) prepareInput(ctx context.Context, m *a2a.Message, bound string, isBound bool) (*turnInput, error) {
	rawCwd, _ := metadataString(m.Metadata, s.cfg.Namespace, "cwd")
	given := rawCwd != ""
	if !given && isBound {
		rawCwd = bound
	}
	cwd, err := s.cfg.Workspace.Resolve(rawCwd)
	badCwd := err != nil
	otherCwd := !badCwd && given && isBound && cwd != bound
	fileCwd := cwd
	if badCwd || otherCwd {
		fileCwd = "" // the turn fails with an invalid-workspace message
	}
	in, err := buildInput(m, s.cfg.Input, fileCwd, s.cfg.Workspace)
	if err != nil {
		return nil, err
	}
	in.cwd, in.badCwd, in.otherCwd, in.cwdGiven = fileCwd, badCwd, otherCwd, given
	if inner, ok := m.Metadata[s.cfg.Namespace].(map[string]any); ok {
		for _, k := range s.cfg.SensitiveMetadataKeys {
			if v, ok := inner[k]; ok {
				if in.credentials == nil {
					in.credentials = map[string]any{}
				}
				in.credentials[k] = v
			}
		}
	}
	return in, nil
}
