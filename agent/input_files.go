package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

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
	path, err := fileURLPath(p.URL, bad)
	if err != nil {
		return "", nil, err
	}
	if cwd == "" || ws == nil {
		return "", nil, bad("file URLs need a valid workspace")
	}
	f, fi, real, err := openWorkspaceFile(cwd, path, ws, bad)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	return readOpenedFile(f, fi, real, p, i, field, lim, bad)
}

// fileURLPath returns the absolute path of a plain local file:// URL, or
// the error (made by bad) saying why raw is not one.
func fileURLPath(raw string, bad func(string) error) (string, error) {
	lower := strings.ToLower(raw)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		return "", bad("remote URLs are not fetched; send the content inline")
	}
	if !strings.HasPrefix(lower, "file:") {
		return "", bad("only file:// URLs are accepted")
	}
	if strings.ContainsAny(raw, "\x00\\") || strings.Contains(lower, "%00") || strings.Contains(lower, "%5c") || strings.Contains(lower, "%2f") {
		return "", bad("the file URL is not a plain local path")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "file" || u.Opaque != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", bad("the file URL is malformed")
	}
	if h := strings.ToLower(u.Host); h != "" && h != "localhost" {
		return "", bad("file URLs must name a local file (no host)")
	}
	path := u.Path
	if !strings.HasPrefix(path, "/") || strings.ContainsRune(path, 0) {
		return "", bad("the file URL must hold an absolute path")
	}
	for _, seg := range strings.Split(path, "/") {
		if seg == ".." || seg == "." {
			return "", bad("the file path must not contain . or .. segments")
		}
	}
	return path, nil
}

// openWorkspaceFile opens path once beneath the workspace cwd and checks
// the open descriptor: a regular file whose real path lies inside cwd and
// the allowed roots of ws and that is no gateway state file under another
// name (a hard link, DenyList.DeniesFile; INPUT-1a). It returns the file, its fstat and
// its real path; on an error (made by bad) nothing is left open.
func openWorkspaceFile(cwd, path string, ws *Workspace, bad func(string) error) (*os.File, os.FileInfo, string, error) {
	f, err := openInWorkspace(cwd, filepath.FromSlash(path))
	if errors.Is(err, errOutsideWorkspace) {
		return nil, nil, "", bad("the file lies outside the workspace")
	}
	if err != nil {
		return nil, nil, "", bad("the file does not exist or is not readable")
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, "", bad("the file URL does not name a regular file")
	}
	real, ok := openedPath(f, fi, filepath.FromSlash(path))
	if !ok {
		f.Close()
		return nil, nil, "", bad("the file changed while it was read")
	}
	if !within(real, cwd) || !ws.Readable(real) || ws.Denied.DeniesFile(fi) {
		// DeniesFile: a hard link to a state file is that file (INPUT-1a).
		f.Close()
		return nil, nil, "", bad("the file lies outside the workspace")
	}
	return f, fi, real, nil
}

// readOpenedFile reads the checked file f (fi its fstat, real its path)
// with the bound of its media type (INPUT-2, INPUT-4): a text file as
// text, a multimodal one hashed into an attachment.
func readOpenedFile(f *os.File, fi os.FileInfo, real string, p a2a.Part, i int, field string, lim InputLimits, bad func(string) error) (string, *backend.Attachment, error) {
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
		b, err := limitio.ReadAll(f, max)
		if err != nil {
			return "", nil, bad(fmt.Sprintf("the file exceeds %d bytes", max))
		}
		if !utf8.Valid(b) {
			return "", nil, bad("the text file is not valid UTF-8")
		}
		return string(b), nil, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, limitio.NewReader(f, max, nil))
	if err != nil {
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
