package harness

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNeedToolChild is run by TestNeedTool in a child process; on its own
// it does nothing.
func TestNeedToolChild(t *testing.T) {
	if os.Getenv("HARNESS_NEEDTOOL_CHILD") != "1" {
		return
	}
	NeedTool(t, "caddy-a2a-no-such-tool", "the child test")
	t.Log("NeedTool returned")
}

// TestNeedTool (issue 33.7): a missing tool skips locally and fails under
// CI=true.
func TestNeedTool(t *testing.T) {
	for _, tc := range []struct {
		ci      string
		wantErr bool
		want    string
	}{
		{"", false, "--- SKIP: TestNeedToolChild"},
		{"true", true, "caddy-a2a-no-such-tool is not installed, but the child test must run in CI"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestNeedToolChild$", "-test.v")
		cmd.Env = append(os.Environ(), "HARNESS_NEEDTOOL_CHILD=1", "CI="+tc.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != tc.wantErr || !strings.Contains(string(out), tc.want) {
			t.Errorf("CI=%q: err=%v, want error %v and %q in:\n%s", tc.ci, err, tc.wantErr, tc.want, out)
		}
	}
	if p := NeedTool(t, "go", "this test"); p == "" {
		t.Error("NeedTool(go) returned an empty path")
	}
}
