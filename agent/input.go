package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

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

// hasInput reports whether the message holds non-blank text or an attachment.
func (in *turnInput) hasInput() bool {
	return strings.TrimSpace(in.text) != "" || len(in.attachments) > 0
}

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

func unsupported(field, mt string) error {
	return &a2a.Error{Code: a2a.CodeContentTypeNotSupported, Message: "Unsupported media type " + strconvQuote(mt) + " in " + field,
		Metadata: map[string]string{"field": field}}
}

func strconvQuote(s string) string {
	if len(s) > 64 {
		s = s[:64]
	}
	return strconv.Quote(s)
}

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

// readFilePart checks a url part (INPUT-2, INPUT-3, INPUT-1a): only
// file:// URLs of local files inside the workspace and the allowed roots,
// never a gateway state path. The file is opened once (openInWorkspace:
// resolved beneath the workspace, without blocking), every check is made on
// the open descriptor (a regular file, its real path, its size), and the
// bytes are read from that descriptor with a bound — never a check of a
// path followed by a second open. Text files come back as text, multimodal
// ones as an attachment.
func readFilePart(p a2a.Part, i int, field string, lim InputLimits, cwd string, ws *Workspace) (string, *backend.Attachment, error) {
	bad := func(reason string) error { return a2a.ErrInvalidParams(field, reason) }
	raw := p.URL
	lower := strings.ToLower(raw)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return "", nil, bad("remote URLs are not fetched; send the content inline")
	}
	if !strings.HasPrefix(lower, "file:") {
		return "", nil, bad("only file:// URLs are accepted")
	}
	if strings.ContainsAny(raw, "\x00\\") || strings.Contains(lower, "%00") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%2f") {
		return "", nil, bad("the file URL is not a plain local path")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", nil, bad("the file URL is malformed")
	}
	if h := strings.ToLower(u.Host); h != "" && h != "localhost" {
		return "", nil, bad("file URLs must name a local file (no host)")
	}
	path := u.Path
	if !strings.HasPrefix(path, "/") || strings.ContainsRune(path, 0) {
		return "", nil, bad("the file URL must hold an absolute path")
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == ".." || seg == "." {
			return "", nil, bad("the file path must not contain . or .. segments")
		}
	}
	if cwd == "" || ws == nil {
		return "", nil, bad("file URLs need a valid workspace")
	}
	f, err := openInWorkspace(cwd, filepath.FromSlash(path))
	if errors.Is(err, errOutsideWorkspace) {
		return "", nil, bad("the file lies outside the workspace")
	}
	if err != nil {
		return "", nil, bad("the file does not exist or is not readable")
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", nil, bad("the file URL does not name a regular file")
	}
	real, ok := openedPath(f, fi, filepath.FromSlash(path))
	if !ok {
		return "", nil, bad("the file changed while it was read")
	}
	if !within(real, cwd) || !ws.Readable(real) {
		return "", nil, bad("the file lies outside the workspace")
	}
	mt := mediaBase(p.MediaType)
	if mt == "" {
		mt = mediaBase(mime.TypeByExtension(filepath.Ext(real)))
	}
	var max int64
	switch {
	case lim.textLike(mt):
		max = lim.MaxTextBytes
	case lim.multimodal(mt):
		max = lim.MaxFileBytes
	default:
		return "", nil, unsupported(field, mt)
	}
	if fi.Size() > max {
		return "", nil, bad(fmt.Sprintf("the file exceeds %d bytes", max))
	}
	if lim.textLike(mt) {
		b, err := io.ReadAll(io.LimitReader(f, max+1))
		if err != nil || int64(len(b)) > max {
			return "", nil, bad(fmt.Sprintf("the file exceeds %d bytes", max))
		}
		if !utf8.Valid(b) {
			return "", nil, bad("the text file is not valid UTF-8")
		}
		return string(b), nil, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, max+1))
	if err != nil || n > max {
		return "", nil, bad(fmt.Sprintf("the file exceeds %d bytes", max))
	}
	name := p.Filename
	if name == "" {
		name = filepath.Base(real)
	}
	return "", &backend.Attachment{Part: i, Filename: safeFilename(name), MediaType: mt, ByteSize: n, SHA256: hex.EncodeToString(h.Sum(nil)), Source: "file", Path: real}, nil
}

// errOutsideWorkspace says a file path does not lie beneath the workspace.
var errOutsideWorkspace = errors.New("outside the workspace")

// openInWorkspace opens the file at the absolute path p for reading,
// resolved beneath the workspace cwd: an os.Root of cwd resolves every
// component with O_NOFOLLOW and follows a symlink only while it stays
// beneath cwd, so a component swapped for a symlink out of the workspace
// (or to /proc) fails instead of escaping; O_NONBLOCK keeps a FIFO from
// hanging the open. p is taken relative to cwd lexically; when that fails
// (p names cwd through a symlink, or an absolute symlink inside cwd is in
// the way) p's symlinks are resolved and the result, if beneath cwd, is
// opened the same way. Either way the caller checks the descriptor it
// gets, never a path.
func openInWorkspace(cwd, p string) (*os.File, error) {
	root, err := os.OpenRoot(cwd)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	open := func(rel string) (*os.File, error) {
		return root.OpenFile(rel, os.O_RDONLY|nonblockFlag, 0)
	}
	if rel, ok := relBeneath(cwd, p); ok {
		f, err := open(rel)
		if err == nil || !strings.Contains(err.Error(), "path escapes") {
			return f, err
		}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	rel, ok := relBeneath(cwd, real)
	if !ok {
		return nil, errOutsideWorkspace
	}
	f, err := open(rel)
	if err != nil && strings.Contains(err.Error(), "path escapes") {
		return nil, errOutsideWorkspace
	}
	return f, err
}

// relBeneath returns p relative to dir when p lies strictly inside dir.
func relBeneath(dir, p string) (string, bool) {
	rel, ok := strings.CutPrefix(filepath.Clean(p), strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
	return rel, ok && rel != ""
}

// openedPath returns the real path of the open file f (fi is its fstat):
// the kernel's name for the descriptor where the platform has one
// (/proc/self/fd on Linux), else the symlink-resolved p when it still
// names the same file as the descriptor. ok is false when neither gives a
// live path of f.
func openedPath(f *os.File, fi os.FileInfo, p string) (string, bool) {
	if real, ok := fdPath(f); ok {
		return real, true
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	cur, err := os.Stat(real)
	if err != nil || !os.SameFile(fi, cur) {
		return "", false
	}
	return real, true
}

// storeInputs writes the raw/data attachments under dir/<taskID>/ (0600)
// and sets their Path, so exec backends can read them.
func storeInputs(dir, taskID string, atts []backend.Attachment) error {
	if dir == "" {
		return nil
	}
	for i := range atts {
		a := &atts[i]
		if a.Source == "file" || a.Data == nil {
			continue
		}
		sub := filepath.Join(dir, taskID)
		if err := os.MkdirAll(sub, 0o700); err != nil {
			return fmt.Errorf("creating the input directory: %w", errors.Unwrap(err))
		}
		name := a.Filename
		if name == "" {
			name = "input"
		}
		p := filepath.Join(sub, fmt.Sprintf("%d-%s", a.Part, name))
		if err := os.WriteFile(p, a.Data, 0o600); err != nil {
			return errors.New("writing an input file failed")
		}
		a.Path = p
	}
	return nil
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

// DefaultAttachmentTypes are the multimodal media types accepted as
// attachments when none are configured: images and audio.
func DefaultAttachmentTypes() []string { return []string{"image/*", "audio/*"} }

// TextLike reports whether a media type is read as prompt text by default
// (text/*, JSON, YAML, TOML, XML, Markdown and their +json/+yaml/+xml kin).
func TextLike(t string) bool { return InputLimits{}.textLike(t) }
