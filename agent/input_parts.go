package agent

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
)

// buildInput turns the parts of a message into prompt text and attachments
// (INPUT-2, INPUT-3). cwd is the resolved workspace of the turn ("" when it
// is invalid: file URLs are then refused); ws holds the allowed roots.
func buildInput(m *a2a.Message, lim InputLimits, cwd string, ws *Workspace) (*turnInput, error) {
	lim = lim.withDefaults()
	in := &turnInput{}
	var b strings.Builder
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(s)
	}
	for i, p := range m.Parts {
		field := fmt.Sprintf("message.parts[%d]", i)
		mt := mediaBase(p.MediaType)
		switch p.Kind() {
		case "text":
			if !lim.textLike(mt) {
				return nil, unsupported(field, mt)
			}
			add(*p.Text)
		case "data":
			switch {
			case mt == "" || lim.textLike(mt):
				if int64(len(p.Data)) > lim.MaxTextBytes {
					return nil, a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxTextBytes))
				}
				var buf bytes.Buffer
				if err := json.Compact(&buf, p.Data); err != nil {
					return nil, a2a.ErrInvalidParams(field, "data is not valid JSON")
				}
				add(buf.String())
			case lim.multimodal(mt):
				// A multimodal data part holds its bytes as a base64 JSON string.
				if int64(len(p.Data)) > int64(base64.StdEncoding.EncodedLen(int(min(lim.MaxInlineBytes, 1<<40))))+2 {
					return nil, a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxInlineBytes))
				}
				var enc string
				if err := json.Unmarshal(p.Data, &enc); err != nil {
					return nil, a2a.ErrInvalidParams(field, "a "+mt+" data part must be a base64 string")
				}
				raw, err := base64.StdEncoding.DecodeString(enc)
				if err != nil {
					return nil, a2a.ErrInvalidParams(field, "data is not valid base64")
				}
				if int64(len(raw)) > lim.MaxInlineBytes {
					return nil, a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxInlineBytes))
				}
				in.attachments = append(in.attachments, inlineAttachment(i, p.Filename, mt, "data", raw))
			default:
				return nil, unsupported(field, mt)
			}
		case "raw":
			switch {
			case lim.textLike(mt):
				if int64(len(p.Raw)) > lim.MaxTextBytes {
					return nil, a2a.ErrInvalidParams(field, fmt.Sprintf("raw part exceeds %d bytes", lim.MaxTextBytes))
				}
				if !utf8.Valid(p.Raw) {
					return nil, a2a.ErrInvalidParams(field, "raw text is not valid UTF-8")
				}
				add(string(p.Raw))
			case lim.multimodal(mt):
				if int64(len(p.Raw)) > lim.MaxInlineBytes {
					return nil, a2a.ErrInvalidParams(field, fmt.Sprintf("raw part exceeds %d bytes", lim.MaxInlineBytes))
				}
				in.attachments = append(in.attachments, inlineAttachment(i, p.Filename, mt, "raw", p.Raw))
			default:
				return nil, unsupported(field, mt)
			}
		case "url":
			// A declared media type the agent cannot take is refused as such,
			// before the URL itself is looked at (RPC-15).
			if mt != "" && !lim.textLike(mt) && !lim.multimodal(mt) {
				return nil, unsupported(field, mt)
			}
			text, att, err := readFilePart(p, i, field, lim, cwd, ws)
			if err != nil {
				return nil, err
			}
			in.readFiles = true
			if att != nil {
				in.attachments = append(in.attachments, *att)
			} else {
				add(text)
			}
		}
	}
	in.text = b.String()
	return in, nil
}

// inlineAttachment is the attachment of raw or data part i holding data.
func inlineAttachment(i int, filename, mt, source string, data []byte) backend.Attachment {
	sum := sha256.Sum256(data)
	return backend.Attachment{Part: i, Filename: safeFilename(filename), MediaType: mt, ByteSize: int64(len(data)),
		SHA256: hex.EncodeToString(sum[:]), Source: source, Data: data}
}

// safeFilename reduces a client-supplied file name to a harmless base name.
func safeFilename(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, "\\", "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
		if b.Len() >= 100 {
			break
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" || s == "_" {
		return ""
	}
	return s
}

// prompt returns the text followed by the attachment manifest.
func (in *turnInput) prompt() string {
	if len(in.attachments) == 0 {
		return in.text
	}
	var b strings.Builder
	b.WriteString(in.text)
	if in.text != "" {
		b.WriteString("\n\n")
	}
	b.WriteString("Attachments:")
	for _, a := range in.attachments {
		b.WriteString("\n")
		b.WriteString(manifestLine(a))
	}
	return b.String()
}

// manifestLine is the prompt line describing one attachment (INPUT-2).
func manifestLine(a backend.Attachment) string {
	name := a.Filename
	if name == "" {
		name = "(unnamed)"
	}
	line := fmt.Sprintf("- part %d: %s (%s, %d bytes, sha256 %s, source %s)", a.Part, name, a.MediaType, a.ByteSize, a.SHA256, a.Source)
	if a.Path != "" {
		line += " at " + a.Path
	}
	return line
}
