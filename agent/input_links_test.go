//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInputHardLinkToState (issue 26.7, INPUT-1a): a hard link inside the
// workspace to a denied file (a file of the data dir, a key file) is
// refused like the file itself; a hard link to an ordinary file, and a
// file with one link, are read.
func TestInputHardLinkToState(t *testing.T) {
	f := newInputFixture(t)
	data := filepath.Join(f.ws, "data")
	if err := os.MkdirAll(filepath.Join(data, "inputs"), 0o700); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(f.other, "card-ec.pem")
	for p, s := range map[string]string{
		filepath.Join(data, "push.keys"):        "PUSH-KEYS",
		filepath.Join(data, "inputs", "a2a.db"): "SQLITE",
		keyFile:                                 "PEM",
		filepath.Join(f.ws, "plain.txt"):        "plain",
		filepath.Join(f.ws, "single.txt"):       "single",
	} {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"keys.txt":   filepath.Join(data, "push.keys"),
		"db.txt":     filepath.Join(data, "inputs", "a2a.db"),
		"pem.txt":    keyFile,
		"plain2.txt": filepath.Join(f.ws, "plain.txt"),
	}
	for name, target := range links {
		if err := os.Link(target, filepath.Join(f.ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	ws := NewWorkspace(f.ws, []string{f.base})
	ws.Denied = NewDenyList(data, keyFile)
	for _, name := range []string{"keys.txt", "db.txt", "pem.txt"} {
		_, err := buildInput(urlMessage("file://"+filepath.Join(f.ws, name), "text/plain"), InputLimits{}, f.ws, ws)
		wantInvalid(t, err, "message.parts[1]")
		if err != nil && !strings.Contains(err.Error(), "outside the workspace") {
			t.Errorf("%s: %v, want the outside-the-workspace error", name, err)
		}
	}
	for name, want := range map[string]string{"plain2.txt": "plain", "single.txt": "single"} {
		in, err := buildInput(urlMessage("file://"+filepath.Join(f.ws, name), "text/plain"), InputLimits{}, f.ws, ws)
		if err != nil || !strings.Contains(in.text, want) {
			t.Errorf("%s: %v, want its content", name, err)
		}
	}
}
