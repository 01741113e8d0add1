package agent

import (
	"mime"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

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

// matchType reports whether media type mt (without parameters) matches one
// of the patterns ("type/subtype" or "type/*").
func matchType(mt string, patterns []string) bool {
	for _, p := range patterns {
		p = mediaBase(p)
		if p == mt || p == "*/*" {
			return true
		}
		if t, ok := strings.CutSuffix(p, "/*"); ok && strings.HasPrefix(mt, t+"/") {
			return true
		}
	}
	return false
}

// textLike reports whether a media type is read as prompt text.
func (l InputLimits) textLike(t string) bool {
	mt := mediaBase(t)
	switch {
	case mt == "", strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/yaml", mt == "application/x-yaml",
		mt == "application/toml", mt == "application/xml", mt == "application/markdown",
		strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+yaml"), strings.HasSuffix(mt, "+xml"):
		return true
	}
	return matchType(mt, l.TextTypes)
}

// multimodal reports whether a media type is accepted as an attachment.
func (l InputLimits) multimodal(t string) bool {
	mt := mediaBase(t)
	return mt != "" && matchType(mt, l.MediaTypes)
}

// unsupported is the error of part field with a media type the agent
// does not take.
func unsupported(field, mt string) error {
	return &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "Unsupported media type " + strconvQuote(mt) + " in " + field,
		Metadata: map[string]string{"field": field}}
}

// strconvQuote quotes s, cut to 64 bytes, for an error message.
func strconvQuote(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.Quote(s)
}

// DefaultAttachmentTypes are the multimodal media types accepted as
// attachments when none are configured: images and audio.
func DefaultAttachmentTypes() []string { return []string{"image/*", "audio/*"} }

// TextLike reports whether a media type is read as prompt text by default
// (text/*, JSON, YAML, TOML, XML, Markdown and their +json/+yaml/+xml kin).
func TextLike(t string) bool { return InputLimits{}.textLike(t) }
