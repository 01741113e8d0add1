package harness

import (
	"os"
	"os/exec"
	"testing"
)

// NeedTool returns the path of the external program name (redis-server,
// node, strace, …). When it is not installed the test is skipped locally,
// but fails when CI=true: CI (.ci/run) installs every tool the suite uses,
// so a missing one there is a broken machine, not a reason to go quiet.
// what says which tests need it, for the message.
func NeedTool(t testing.TB, name, what string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed, but %s must run in CI", name, what)
	}
	t.Skipf("%s is not installed; skipping %s (it fails under CI=true)", name, what)
	return ""
}
