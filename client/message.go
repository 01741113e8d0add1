package client

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Limits of local message input.
const (
	// MaxFileSize bounds one --file.
	MaxFileSize = 20 << 20
	// MaxMessageSize bounds the message text (argument or stdin).
	MaxMessageSize = 10 << 20
)

// DefaultNamespace is the metadata namespace of the gateway (metadata.<ns>.cwd).
const DefaultNamespace = "iac_code"

// MessageInput describes the user message to send.
type MessageInput struct {
	// Text is the prompt ("" for none).
	Text string
	// Files are local files sent as parts.
	Files []string
	// Data is a JSON value sent as a data part ("" for none).
	Data string
	// ContextID continues a conversation.
	ContextID string
	// TaskID continues an input-required task.
	TaskID string
	// Cwd is sent as metadata.<Namespace>.cwd.
	Cwd string
	// Namespace is the metadata namespace (default iac_code).
	Namespace string
}

// NewID returns a random message id (UUIDv4 format).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// BuildMessage turns the input into a ROLE_USER message.
func BuildMessage(in MessageInput) (*a2a.Message, error) {
	msg := &a2a.Message{MessageID: NewID(), Role: a2a.RoleUser, ContextID: in.ContextID, TaskID: in.TaskID}
	if in.Text != "" {
		msg.Parts = append(msg.Parts, a2a.TextPart(in.Text))
	}
	for _, f := range in.Files {
		p, err := FilePart(f)
		if err != nil {
			return nil, err
		}
		msg.Parts = append(msg.Parts, p)
	}
	if in.Data != "" {
		if !json.Valid([]byte(in.Data)) {
			return nil, usagef("--data is not valid JSON")
		}
		msg.Parts = append(msg.Parts, a2a.Part{Data: json.RawMessage(in.Data), MediaType: "application/json"})
	}
	if len(msg.Parts) == 0 {
		return nil, usagef("nothing to send: give a MESSAGE argument, pipe it on stdin, or use --file/--data")
	}
	if in.Cwd != "" {
		cwd := in.Cwd
		if !filepath.IsAbs(cwd) {
			abs, err := filepath.Abs(cwd)
			if err != nil {
				return nil, usagef("--cwd %q: %v", in.Cwd, err)
			}
			cwd = abs
		}
		ns := in.Namespace
		if ns == "" {
			ns = DefaultNamespace
		}
		msg.Metadata = map[string]any{ns: map[string]any{"cwd": cwd}}
	}
	return msg, nil
}

// textLike reports whether a media type is sent as a text part.
func textLike(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml",
		"application/javascript", "application/x-sh", "application/toml", "application/x-ndjson",
		"application/sql", "application/x-httpd-php", "image/svg+xml":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// extra types mime may not know on a minimal system.
var extTypes = map[string]string{
	".md": "text/markdown", ".go": "text/x-go", ".py": "text/x-python", ".ts": "text/typescript",
	".yaml": "application/yaml", ".yml": "application/yaml", ".toml": "application/toml",
	".tf": "text/plain", ".hcl": "text/plain", ".sh": "application/x-sh", ".rs": "text/x-rust",
	".json": "application/json", ".txt": "text/plain", ".csv": "text/csv", ".png": "image/png",
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".pdf": "application/pdf", ".svg": "image/svg+xml", ".wav": "audio/wav", ".mp3": "audio/mpeg",
}

// DetectMediaType returns the media type of a file from its extension,
// else from its content.
func DetectMediaType(name string, content []byte) string {
	ext := strings.ToLower(filepath.Ext(name))
	mt := extTypes[ext]
	if mt == "" && ext != "" {
		mt = mime.TypeByExtension(ext)
	}
	if mt == "" {
		mt = http.DetectContentType(content)
	}
	if base, _, err := mime.ParseMediaType(mt); err == nil {
		mt = base
	}
	return mt
}

// FilePart reads a local file into a part: text-like UTF-8 files become text
// parts with their media type, anything else a raw (base64) part.
func FilePart(path string) (a2a.Part, error) {
	f, err := os.Open(path)
	if err != nil {
		return a2a.Part{}, usagef("--file %s: %v", path, unwrapPathErr(err))
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return a2a.Part{}, usagef("--file %s: %v", path, unwrapPathErr(err))
	}
	if st.IsDir() {
		return a2a.Part{}, usagef("--file %s: is a directory", path)
	}
	if st.Size() > MaxFileSize {
		return a2a.Part{}, usagef("--file %s: larger than %d MiB", path, MaxFileSize>>20)
	}
	b, err := readLimited(f, MaxFileSize)
	if err != nil {
		return a2a.Part{}, usagef("--file %s: %v", path, err)
	}
	name := filepath.Base(path)
	mt := DetectMediaType(name, b)
	if textLike(mt) && utf8.Valid(b) {
		s := string(b)
		return a2a.Part{Text: &s, MediaType: mt, Filename: name}, nil
	}
	if b == nil {
		b = []byte{}
	}
	return a2a.Part{Raw: b, MediaType: mt, Filename: name}, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// ReadMessage reads a message from r with the size limit.
func ReadMessage(r interface{ Read([]byte) (int, error) }) (string, error) {
	b, err := readLimited(r, MaxMessageSize)
	if err != nil {
		return "", usagef("reading the message from stdin: %v", err)
	}
	if !utf8.Valid(b) {
		return "", usagef("the message on stdin is not UTF-8 text (use --file for binary content)")
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}
