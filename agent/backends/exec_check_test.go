package backends

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// OPS-9: a program that cannot be started is refused at provision, with
// its name and the reason.
func TestExecCheckProgram(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "agent.sh")
	plain := filepath.Join(dir, "plain.txt")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		prog string
		want []string // "" for no error
	}{
		{script, nil},
		{"./agent.sh", nil}, // relative to the default workspace
		{"sh", nil},         // found in PATH
		{"no-such-agent-xyz", []string{`"no-such-agent-xyz"`, "not found in $PATH"}},
		{filepath.Join(dir, "missing"), []string{filepath.Join(dir, "missing"), "no such file or directory"}},
		{"./missing", []string{filepath.Join(dir, "missing"), "no such file or directory"}},
		{dir, []string{dir, "is a directory"}},
		{plain, []string{plain, "not executable (mode 0644)"}},
	} {
		err := (&Exec{Argv: []string{tc.prog, "arg"}}).CheckProgram(dir)
		if tc.want == nil {
			if err != nil {
				t.Errorf("CheckProgram(%s) = %v, want nil", tc.prog, err)
			}
			continue
		}
		if runtime.GOOS == "windows" && strings.Contains(tc.want[1], "executable") {
			continue
		}
		if err == nil {
			t.Errorf("CheckProgram(%s) = nil, want %q", tc.prog, tc.want)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("CheckProgram(%s) = %q, want it to contain %q", tc.prog, err, w)
			}
		}
	}
}
