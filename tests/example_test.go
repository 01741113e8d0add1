package tests

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// exampleRun runs caddy on the Caddyfile cfg with env (working directory
// dir), waits up to 20s for /health on 127.0.0.1:port, and stops the
// process at cleanup (SIGINT; SIGKILL after 20s). It returns the output.
func exampleRun(t *testing.T, dir, cfg string, env []string, port int) *bytes.Buffer {
	t.Helper()
	cmd := exec.Command(harness.Binary(t), "run", "--config", cfg, "--adapter", "caddyfile")
	cmd.Dir, cmd.Env = dir, env
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGINT)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", port))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return out
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("example did not become healthy:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestExampleRunsAsShipped is the newcomer's path (BUILD-2): the binary runs
// Caddyfile.example unchanged — echo backend, SQLite store and local push
// queue under the data folder, no TLS — and answers health, the iac-code
// card (CARD-5) and a SendMessage.
func TestExampleRunsAsShipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := harness.FreePort(t)
	exampleRun(t, dir, filepath.Join(harness.RepoRoot(), "Caddyfile.example"),
		harness.Env(dir, fmt.Sprintf("A2A_ADDR=127.0.0.1:%d", port), "A2A_DATA_DIR="+filepath.Join(dir, "data"), "A2A_ADMIN=off"), port)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return string(b)
	}
	card := get("/.well-known/agent-card.json")
	for _, want := range []string{`"name":"iac-code"`, `"id":"terraform_ros_conversion"`, `"url":"` + base + `/"`, `"pushNotifications":true`, `urn:iac-code:a2a:artifact-metadata:v1`} {
		if !strings.Contains(card, want) {
			t.Errorf("example card lacks %s:\n%s", want, card)
		}
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Create a VPC"}]}}}`
	b := harness.At(base).Do(t, http.MethodPost, body).Raw
	if !strings.Contains(string(b), "TASK_STATE_INPUT_REQUIRED") || !strings.Contains(string(b), "Echo: Create a VPC") {
		t.Fatalf("SendMessage on the example: %s", b)
	}
}

// TestExampleDefaultAddresses runs Caddyfile.example with A2A_ADDR unset
// (only its port 8080 replaced by a free one): both loopback names are
// served — health, the card through the CLI, a 404 JSON body for unknown
// paths — and A2A_ADMIN moves Caddy's admin endpoint.
func TestExampleDefaultAddresses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port, admin := harness.FreePort(t), harness.FreePort(t)
	src, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "{$A2A_ADDR:127.0.0.1:8080") {
		t.Fatal("Caddyfile.example lost its A2A_ADDR default")
	}
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(src), ":8080", fmt.Sprintf(":%d", port))), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range harness.Env(dir, "A2A_DATA_DIR="+filepath.Join(dir, "data"), fmt.Sprintf("A2A_ADMIN=127.0.0.1:%d", admin)) {
		if !strings.HasPrefix(kv, "A2A_ADDR=") {
			env = append(env, kv)
		}
	}
	out := exampleRun(t, dir, cfg, env, port)
	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"127.0.0.1", "localhost"} {
		base := fmt.Sprintf("http://%s:%d", host, port)
		if code, body := get(base + "/health"); code != 200 || body != `{"status":"healthy"}` {
			t.Errorf("%s/health: %d %q", base, code, body)
		}
		if code, body := get(base + "/no-such-path"); code != 404 || !strings.Contains(body, `"NOT_FOUND"`) {
			t.Errorf("%s/no-such-path: %d %q", base, code, body)
		}
		r := clientRun(t, "", nil, "card", "get", "--json", base)
		if r.Code != 0 || !strings.Contains(r.Stdout, `"name":"iac-code"`) || !strings.Contains(r.Stdout, `"url":"`+base+`/"`) {
			t.Errorf("card get %s: exit %d\n%s\n%s", base, r.Code, r.Stdout, r.Stderr)
		}
	}
	if code, body := get(fmt.Sprintf("http://127.0.0.1:%d/config/", admin)); code != 200 || !strings.Contains(body, `"a2a"`) {
		t.Errorf("admin endpoint from A2A_ADMIN: %d %.200s", code, body)
	}
	if t.Failed() {
		t.Logf("output:\n%s", out.String())
	}
}
