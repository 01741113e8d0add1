package cli

import (
	"errors"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// TestHostHooks checks that the exit code reaches the program through its
// Exit hook (CLI-2: caddymodule turns it into Caddy's exit) and that the
// prune ages use its duration syntax.
func TestHostHooks(t *testing.T) {
	var gotCode int
	sentinel := errors.New("program exit")
	var parsed []string
	SetHost(Host{
		Exit: func(_ *cobra.Command, code int) error { gotCode = code; return sentinel },
		ParseDuration: func(s string) (time.Duration, error) {
			parsed = append(parsed, s)
			return 0, errors.New("no")
		},
	})
	defer SetHost(Host{})
	root, _, _ := buildTestA2A(t)
	root.SetArgs([]string{"a2a", "call", "--nope"})
	if err := root.Execute(); err != sentinel || gotCode != ExitUsage {
		t.Fatalf("usage error: err %v code %d, want the hook's error with %d", err, gotCode, ExitUsage)
	}
	root, _, errb := buildTestA2A(t)
	root.SetArgs([]string{"a2a", "tasks", "prune", "--older-than", "30d", "--data-dir", t.TempDir()})
	err := root.Execute()
	if len(parsed) == 0 || parsed[0] != "30d" || err != sentinel || gotCode != ExitUsage || !strings.Contains(errb.String(), "--older-than") {
		t.Fatalf("prune age: parsed %q, err %v, code %d, stderr %q", parsed, err, gotCode, errb.String())
	}
	SetHost(Host{})
	if h := currentHost(); h.Exit(nil, 3).Error() != "exiting with status 3" {
		t.Fatal("default Exit lost its code")
	}
}

// TestNoCaddyImports keeps the command tree free of Caddy (issue 27): the
// program hands it its hooks (SetHost, SetStdioOpener).
func TestNoCaddyImports(t *testing.T) {
	out, err := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "github.com/caddyserver/") || strings.HasSuffix(dep, "/caddymodule") {
			t.Errorf("internal/cli depends on %s", dep)
		}
	}
}
