//go:build unix

package keyfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadModes: the one key-file rule (issue 26.5): 0600 and 0400 are
// read; 0644, 0640 and 0604 are refused with the name, the mode and the
// fix, never the content; a directory and an oversized file are refused.
func TestReadModes(t *testing.T) {
	dir := t.TempDir()
	const secret = "-----BEGIN PRIVATE KEY-----secret-----END PRIVATE KEY-----"
	for _, tc := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o600, true}, {0o400, true}, {0o644, false}, {0o640, false}, {0o604, false}, {0o660, false}} {
		p := filepath.Join(dir, "k.pem")
		_ = os.Remove(p)
		if err := os.WriteFile(p, []byte(secret), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, tc.mode); err != nil {
			t.Fatal(err)
		}
		b, err := Read(p, 1<<10)
		if tc.ok {
			if err != nil || string(b) != secret {
				t.Fatalf("mode %o: %v", tc.mode, err)
			}
			continue
		}
		if !errors.Is(err, ErrMode) {
			t.Fatalf("mode %o: %v, want ErrMode", tc.mode, err)
		}
		msg := err.Error()
		for _, want := range []string{`"k.pem"`, "chmod 600 k.pem", fmt.Sprintf("mode %04o", uint32(tc.mode))} {
			if !strings.Contains(msg, want) {
				t.Fatalf("mode %o: %q lacks %q", tc.mode, msg, want)
			}
		}
		if strings.Contains(msg, "secret") || strings.Contains(msg, dir) {
			t.Fatalf("mode %o: error leaks content or directory: %q", tc.mode, msg)
		}
	}
	if _, err := Read(dir, 1<<10); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("directory: %v", err)
	}
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, 2048), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(big, 1<<10); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("oversized: %v", err)
	}
}

// TestReadMissing: a missing key file's error matches fs.ErrNotExist and
// names only the base name.
func TestReadMissing(t *testing.T) {
	dir := t.TempDir()
	_, err := Read(filepath.Join(dir, "none.pem"), 1<<10)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `"none.pem"`) || strings.Contains(err.Error(), dir) {
		t.Fatalf("missing file: %v", err)
	}
}
