//go:build unix

package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestInputHardLinkToStateRefused (issue 26.7, INPUT-1a): with the data
// dir inside the workspace (Caddyfile.example run from a directory), a
// hard link made in the workspace to the push key ring, the page-token key
// or the database is the state file under another name: a file part naming
// it is refused with the path-free error, while a hard link to an ordinary
// file is still read.
func TestInputHardLinkToStateRefused(t *testing.T) {
	t.Parallel()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	base := ihRunExample(t, dir)
	data := filepath.Join(dir, "data")
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	states := []string{"push.keys", "pagetoken.key", "a2a.db"}
	// /health answers once the HTTP server runs, which may be before the
	// a2a app's Start has opened the data directory: wait for its files.
	waitFor(t, 20*time.Second, func() bool {
		for _, name := range states {
			if _, err := os.Stat(filepath.Join(data, name)); err != nil {
				return false
			}
		}
		return true
	})
	for _, name := range states {
		link := filepath.Join(ws, "x-"+name+".txt")
		if err := os.Link(filepath.Join(data, name), link); err != nil {
			t.Fatalf("ln %s: %v", name, err)
		}
		res, rpcErr := harness.At(base).RPC(t, "SendMessage", map[string]any{"message": ihFileMessage(link, "text/plain", "")})
		if rpcErr == nil {
			t.Errorf("hard link to %s read through a file part: %.80s", name, bkStr(res, "task", "status", "message", "parts", 0, "text"))
			continue
		}
		msg := bkStr(rpcErr, "message")
		if bkGet(rpcErr, "code") != float64(-32602) || !strings.Contains(msg, "outside the workspace") || strings.Contains(msg, dir) {
			t.Errorf("hard link to %s: %v, want the path-free InvalidParams outside-the-workspace error", name, rpcErr)
		}
	}
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("ordinary hard-linked notes"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(ws, "notes-link.txt")
	if err := os.Link(notes, link); err != nil {
		t.Fatal(err)
	}
	res, rpcErr := harness.At(base).RPC(t, "SendMessage", map[string]any{"message": ihFileMessage(link, "text/plain", "")})
	if rpcErr != nil || !strings.Contains(bkStr(res, "task", "status", "message", "parts", 0, "text"), "ordinary hard-linked notes") {
		t.Errorf("hard link to an ordinary file: %v %v, want its content echoed", res, rpcErr)
	}
}
