package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// maxInlineText bounds a data or raw text part turned into prompt text.
const maxInlineText = 1 << 20

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

// mediaBase returns the media type without parameters, lower-cased.
func mediaBase(t string) string {
	if t == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(t); err == nil {
		return mt
	}
	return strings.ToLower(strings.TrimSpace(strings.Split(t, ";")[0]))
}

// textLike reports whether a media type is read as prompt text.
func textLike(t string) bool {
	mt := mediaBase(t)
	switch {
	case mt == "", strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/yaml", mt == "application/x-yaml",
		mt == "application/toml", mt == "application/xml", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+yaml"):
		return true
	}
	return false
}

// buildPrompt turns the parts of a message into prompt text (INPUT-2).
func buildPrompt(m *a2a.Message) (string, error) {
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	for i, p := range m.Parts {
		field := fmt.Sprintf("message.parts[%d]", i)
		switch p.Kind() {
		case "text":
			if !textLike(p.MediaType) {
				return "", &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "Unsupported media type for " + field}
			}
			add(*p.Text)
		case "data":
			if len(p.Data) > maxInlineText {
				return "", a2a.ErrInvalidParams(field, "data part exceeds 1 MiB")
			}
			var buf bytes.Buffer
			if err := json.Compact(&buf, p.Data); err != nil {
				return "", a2a.ErrInvalidParams(field, "data is not valid JSON")
			}
			add(buf.String())
		case "raw":
			if !textLike(p.MediaType) {
				return "", &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "Unsupported media type for " + field}
			}
			if len(p.Raw) > maxInlineText {
				return "", a2a.ErrInvalidParams(field, "raw part exceeds 1 MiB")
			}
			if !utf8.Valid(p.Raw) {
				return "", a2a.ErrInvalidParams(field, "raw text is not valid UTF-8")
			}
			add(string(p.Raw))
		case "url":
			if strings.HasPrefix(strings.ToLower(p.URL), "http://") || strings.HasPrefix(strings.ToLower(p.URL), "https://") {
				return "", a2a.ErrInvalidParams(field, "remote URLs are not fetched")
			}
			return "", &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "URL parts are not supported for " + field}
		}
	}
	return b.String(), nil
}

// stripSensitive returns m with credential keys removed from
// metadata.<ns> (AUTH-5); m itself is not modified.
func stripSensitive(m *a2a.Message, ns string, keys []string) *a2a.Message {
	inner, ok := m.Metadata[ns].(map[string]any)
	if !ok {
		return m
	}
	var drop bool
	for _, k := range keys {
		if _, ok := inner[k]; ok {
			drop = true
			break
		}
	}
	if !drop {
		return m
	}
	c := *m
	c.Metadata = make(map[string]any, len(m.Metadata))
	for k, v := range m.Metadata {
		c.Metadata[k] = v
	}
	cleaned := make(map[string]any, len(inner))
	for k, v := range inner {
		cleaned[k] = v
	}
	for _, k := range keys {
		delete(cleaned, k)
	}
	c.Metadata[ns] = cleaned
	return &c
}

// metadataString returns metadata.<ns>.<key> as a string.
func metadataString(md map[string]any, ns, key string) (string, bool) {
	inner, ok := md[ns].(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := inner[key].(string)
	return s, ok
}

// acceptsOutput reports whether any accepted mode matches what the agent
// produces (wildcards allowed); an empty list accepts everything.
func acceptsOutput(accepted, produced []string) bool {
	if len(accepted) == 0 {
		return true
	}
	for _, a := range accepted {
		a = mediaBase(a)
		for _, p := range produced {
			p = mediaBase(p)
			if a == p || a == "*/*" || a == "*" {
				return true
			}
			if t, ok := strings.CutSuffix(a, "/*"); ok && strings.HasPrefix(p, t+"/") {
				return true
			}
		}
	}
	return false
}
