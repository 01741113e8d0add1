package tests

// (Not named interop_js_test.go: the _js suffix is a GOOS=js build constraint,
// so go test would silently never compile that file.)

// Interop with the official A2A JS SDK (@a2a-js/sdk, pinned in
// tests/interop/js/package.json): runs tests/interop/js/client.mjs against a
// running gateway and checks its JSON summary.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const interopJSSDKVersion = "1.3.0"

// interopJSSummary is what client.mjs prints.
type interopJSSummary struct {
	OK       bool   `json:"ok"`
	SDK      string `json:"sdk"`
	Bindings map[string]struct {
		Steps map[string]map[string]any `json:"steps"`
	} `json:"bindings"`
	Failures []string `json:"failures"`
}

func interopNeedNode(t *testing.T) string {
	t.Helper()
	return harness.NeedTool(t, "node", "the JS SDK interop tests")
}

// interopNodeSDK returns the node binary (the test is skipped without
// it, fails under CI=true) and tests/interop/js with the JS SDK installed
// (interopJSInstall).
func interopNodeSDK(t *testing.T) (node, dir string) {
	t.Helper()
	node = interopNeedNode(t)
	dir = filepath.Join(harness.RepoRoot(), "tests", "interop", "js")
	interopJSInstall(t, dir)
	return node, dir
}

// interopJSInstallMu keeps parallel tests from running `npm ci` in the
// same directory at once.
var interopJSInstallMu sync.Mutex

// interopJSInstall runs `npm ci` in dir when the SDK is not installed yet.
func interopJSInstall(t *testing.T, dir string) {
	t.Helper()
	interopJSInstallMu.Lock()
	defer interopJSInstallMu.Unlock()
	pkg := filepath.Join(dir, "node_modules", "@a2a-js", "sdk", "package.json")
	if b, err := os.ReadFile(pkg); err == nil {
		var p struct{ Version string }
		_, wsErr := os.Stat(filepath.Join(dir, "node_modules", "ws", "package.json")) // XPORT-3 interop
		if json.Unmarshal(b, &p) == nil && p.Version == interopJSSDKVersion && wsErr == nil {
			return
		}
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("node is installed but npm is not, so the JS SDK cannot be installed: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
}

func TestInteropJSSDK(t *testing.T) {
	t.Parallel()
	node, dir := interopNodeSDK(t)

	fast := interopStartGateway(t, "backend echo")
	slow := interopStartGateway(t, interopSlowEcho)

	var sum interopJSSummary
	stdout, runErr := interopRunNode(t, 3*time.Minute, node, dir, &sum, "client.mjs", fast.BaseURL, slow.BaseURL)
	for _, f := range sum.Failures {
		t.Errorf("JS SDK: %s", f)
	}
	if runErr != nil {
		t.Errorf("client.mjs failed: %v", runErr)
	}
	if runErr == nil && !sum.OK {
		t.Errorf("client.mjs exited 0 but reported ok=false")
	}
	if sum.SDK != "@a2a-js/sdk@"+interopJSSDKVersion {
		t.Errorf("client.mjs ran %q, want @a2a-js/sdk@%s", sum.SDK, interopJSSDKVersion)
	}

	for _, binding := range []string{"JSONRPC", "HTTP+JSON"} {
		b, ok := sum.Bindings[binding]
		if !ok {
			t.Errorf("%s: no results in the summary", binding)
			continue
		}
		step := func(name string) map[string]any {
			s, ok := b.Steps[name]
			if !ok {
				t.Errorf("%s: step %s did not run", binding, name)
				return map[string]any{}
			}
			if s["ok"] != true {
				t.Errorf("%s: step %s failed: %v", binding, name, s["error"])
			}
			return s
		}
		want := func(name, key, value string) {
			if s := step(name); s["ok"] == true && s[key] != value {
				t.Errorf("%s %s: %s = %v, want %q", binding, name, key, s[key], value)
			}
		}
		wantPrefix := func(name, key, prefix string) {
			if s := step(name); s["ok"] == true {
				if v, _ := s[key].(string); !strings.HasPrefix(v, prefix) {
					t.Errorf("%s %s: %s = %v, want prefix %q", binding, name, key, s[key], prefix)
				}
			}
		}
		want("agentCard", "name", "test-agent")
		want("agentCard", "protocolVersion", "1.0")
		want("sendMessage", "state", "TASK_STATE_INPUT_REQUIRED")
		want("sendMessage", "text", "Echo: hello from a2a-js over "+binding)
		wantPrefix("sendMessageStream", "firstEvent", "task(")
		want("sendMessageStream", "lastEvent", "statusUpdate(TASK_STATE_INPUT_REQUIRED)")
		want("followUp", "state", "TASK_STATE_INPUT_REQUIRED")
		if s1, s2 := step("sendMessage"), step("followUp"); s1["ok"] == true && s2["ok"] == true {
			if s1["contextId"] != s2["contextId"] || s1["taskId"] == s2["taskId"] {
				t.Errorf("%s follow-up: task %v in context %v, first turn task %v in context %v; want same context, new task",
					binding, s2["taskId"], s2["contextId"], s1["taskId"], s1["contextId"])
			}
		}
		want("getTask", "state", "TASK_STATE_INPUT_REQUIRED")
		want("getTask", "unknownIdError", "TaskNotFoundError")
		step("listTasks")
		want("cancelTask", "state", "TASK_STATE_CANCELED")
		want("cancelTask", "lastEvent", "statusUpdate(TASK_STATE_CANCELED)")
		want("cancelTask", "subscribeTerminalError", "UnsupportedOperationError")
		wantPrefix("resubscribeTask", "firstEvent", "task(")
		want("resubscribeTask", "lastEvent", "statusUpdate(TASK_STATE_INPUT_REQUIRED)")
	}
	if t.Failed() {
		t.Logf("client.mjs summary:\n%s", stdout)
	}

	fast.interopCheckVersionHeaders(t, "a2a-js (fast gateway)")
	slow.interopCheckVersionHeaders(t, "a2a-js (slow gateway)")
	// The SDK's card resolver sends A2A-Version too (the harness's own
	// readiness probe, a Go client, does not).
	cardFetches := 0
	for _, gw := range []*interopGateway{fast, slow} {
		for _, e := range gw.interopAccessLog(t) {
			if !strings.HasPrefix(e.URI, "/.well-known/") || strings.HasPrefix(e.Headers.Get("User-Agent"), "Go-http-client") {
				continue
			}
			cardFetches++
			if e.Headers.Get("A2A-Version") != "1.0" {
				t.Errorf("a2a-js fetched the card without A2A-Version: 1.0 (headers %v)", e.Headers)
			}
		}
	}
	if cardFetches == 0 {
		t.Errorf("the access logs show no card fetch by a2a-js")
	}
}

// interopRunNode runs `node script args…` in dir for at most timeout,
// logs what it wrote to stderr and decodes the JSON summary it printed
// into sum, failing the test when it printed none; it returns its stdout
// and exit error.
func interopRunNode(t *testing.T, timeout time.Duration, node, dir string, sum any, script string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	if stderr.Len() > 0 {
		t.Logf("%s stderr:\n%s", script, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), sum); err != nil {
		t.Fatalf("%s (exit %v) printed no JSON summary: %v\nstdout:\n%s", script, runErr, err, stdout.String())
	}
	return stdout.String(), runErr
}
