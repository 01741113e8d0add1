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
	ib := &inputBuilder{lim: lim.withDefaults(), cwd: cwd, ws: ws, in: &turnInput{}}
	for i, p := range m.Parts {
		if err := ib.addPart(i, p); err != nil {
			return nil, err
		}
	}
	ib.in.text = ib.b.String()
	return ib.in, nil
}

// inputBuilder collects the prompt text and attachments of a message's
// parts, one part at a time.
type inputBuilder struct {
	lim InputLimits
	cwd string
	ws  *Workspace
	in  *turnInput
	b   strings.Builder
}

// add appends s to the prompt text, one line per part.
func (ib *inputBuilder) add(s string) {
	if ib.b.Len() > 0 {
		ib.b.WriteString("\n")
	}
	ib.b.WriteString(s)
}

// addPart adds part i by its kind.
func (ib *inputBuilder) addPart(i int, p a2a.Part) error {
	field := fmt.Sprintf("message.parts[%d]", i)
	mt := mediaBase(p.MediaType)
	switch p.Kind() {
	case "text":
		if !ib.lim.textLike(mt) {
			return unsupported(field, mt)
		}
		ib.add(*p.Text)
	case "data":
		return ib.addData(i, p, field, mt)
	case "raw":
		return ib.addRaw(i, p, field, mt)
	case "url":
		return ib.addURL(i, p, field, mt)
	}
	return nil
}

// addData adds a data part: compact JSON as text, or a multimodal one's
// base64 bytes as an attachment.
func (ib *inputBuilder) addData(i int, p a2a.Part, field, mt string) error {
	lim := ib.lim
	switch {
	case mt == "" || lim.textLike(mt):
		if int64(len(p.Data)) > lim.MaxTextBytes {
			return a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxTextBytes))
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, p.Data); err != nil {
			return a2a.ErrInvalidParams(field, "data is not valid JSON")
		}
		ib.add(buf.String())
	case lim.multimodal(mt):
		// A multimodal data part holds its bytes as a base64 JSON string.
		if int64(len(p.Data)) > int64(base64.StdEncoding.EncodedLen(int(min(lim.MaxInlineBytes, 1<<40))))+2 {
			return a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxInlineBytes))
		}
		var enc string
		if err := json.Unmarshal(p.Data, &enc); err != nil {
			return a2a.ErrInvalidParams(field, "a "+mt+" data part must be a base64 string")
		}
		raw, err := base64.StdEncoding.DecodeString(enc)
		if err != nil {
			return a2a.ErrInvalidParams(field, "data is not valid base64")
		}
		if int64(len(raw)) > lim.MaxInlineBytes {
			return a2a.ErrInvalidParams(field, fmt.Sprintf("data part exceeds %d bytes", lim.MaxInlineBytes))
		}
		ib.in.attachments = append(ib.in.attachments, inlineAttachment(i, p.Filename, mt, "data", raw))
	default:
		return unsupported(field, mt)
	}
	return nil
}

// addRaw adds a raw part: UTF-8 text, or a multimodal one as an attachment.
func (ib *inputBuilder) addRaw(i int, p a2a.Part, field, mt string) error {
	lim := ib.lim
	switch {
	case lim.textLike(mt):
		if int64(len(p.Raw)) > lim.MaxTextBytes {
			return a2a.ErrInvalidParams(field, fmt.Sprintf("raw part exceeds %d bytes", lim.MaxTextBytes))
		}
		if !utf8.Valid(p.Raw) {
			return a2a.ErrInvalidParams(field, "raw text is not valid UTF-8")
		}
		ib.add(string(p.Raw))
	case lim.multimodal(mt):
		if int64(len(p.Raw)) > lim.MaxInlineBytes {
			return a2a.ErrInvalidParams(field, fmt.Sprintf("raw part exceeds %d bytes", lim.MaxInlineBytes))
		}
		ib.in.attachments = append(ib.in.attachments, inlineAttachment(i, p.Filename, mt, "raw", p.Raw))
	default:
		return unsupported(field, mt)
	}
	return nil
}

// addURL adds a url part: a file:// text file as text, a multimodal one as
// an attachment (readFilePart).
func (ib *inputBuilder) addURL(i int, p a2a.Part, field, mt string) error {
	lim := ib.lim
	// A declared media type the agent cannot take is refused as such,
	// before the URL itself is looked at (RPC-15).
	if mt != "" && !lim.textLike(mt) && !lim.multimodal(mt) {
		return unsupported(field, mt)
	}
	text, att, err := readFilePart(p, i, field, lim, ib.cwd, ib.ws)
	if err != nil {
		return err
	}
	ib.in.readFiles = true
	if att != nil {
		ib.in.attachments = append(ib.in.attachments, *att)
	} else {
		ib.add(text)
	}
	return nil
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
