package tests

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// exampleFiles are the Caddyfiles under examples/, relative to the
// repository root.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(harness.RepoRoot(), "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && (d.Name() == "Caddyfile" || strings.HasSuffix(d.Name(), ".Caddyfile")) {
			rel, _ := filepath.Rel(harness.RepoRoot(), path)
			files = append(files, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("examples/ has %d Caddyfiles (%v), want at least 4", len(files), files)
	}
	return files
}

// exampleAdapt runs `caddy adapt` (with --validate unless the file needs
// services a test does not have, such as Redis or a remote agent) on one
// example from its own directory, as a reader would.
func exampleAdapt(t *testing.T, rel string, validate bool, env ...string) (string, error) {
	t.Helper()
	path := filepath.Join(harness.RepoRoot(), rel)
	args := []string{"adapt", "--config", path, "--adapter", "caddyfile"}
	if validate {
		args = append(args, "--validate")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), args...)
	cmd.Dir = filepath.Dir(path)
	cmd.Env = harness.Env(t.TempDir(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestExamplesAdapt: every Caddyfile under examples/ adapts; those that
// need no outside service also validate (their modules provision).
func TestExamplesAdapt(t *testing.T) {
	t.Parallel()
	// Files whose provisioning needs a service a test does not run: adapt only.
	adaptOnly := map[string]bool{
		filepath.Join("examples", "redis-two-gateways", "gateway.Caddyfile"):  true,
		filepath.Join("examples", "redis-two-gateways", "balancer.Caddyfile"): true,
	}
	for _, rel := range exampleFiles(t) {
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			dir := t.TempDir()
			out, err := exampleAdapt(t, rel, !adaptOnly[rel],
				"A2A_DATA_DIR="+filepath.Join(dir, "data"), "A2A_TOKEN=example-token", "A2A_REDIS_URL=redis://127.0.0.1:6379/0")
			if err != nil {
				t.Fatalf("caddy adapt %s: %v\n%s", rel, err, out)
			}
			if !strings.Contains(out, `"apps"`) {
				t.Fatalf("caddy adapt %s printed no config:\n%s", rel, out)
			}
		})
	}
}

// TestExamplesRun starts the examples that need nothing but the binary
// (echo; the bash agent) from their own directory, fetches the card and
// sends one message.
func TestExamplesRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		dir, name, token, want string
	}{
		{dir: "echo", name: "hello", want: "Echo: hi there"},
		{dir: "exec-bash", name: "bash-agent", token: "example-token", want: "Done."},
	}
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			tmp := t.TempDir()
			port := harness.FreePort(t)
			exDir := filepath.Join(harness.RepoRoot(), "examples", c.dir)
			env := harness.Env(tmp, fmt.Sprintf("A2A_ADDR=127.0.0.1:%d", port), "A2A_DATA_DIR="+filepath.Join(tmp, "data"), "A2A_ADMIN=off")
			if c.token != "" {
				env = append(env, "A2A_TOKEN="+c.token)
			}
			exampleRun(t, exDir, filepath.Join(exDir, "Caddyfile"), env, port)
			base := fmt.Sprintf("http://127.0.0.1:%d", port)
			resp, err := http.Get(base + "/.well-known/agent-card.json")
			if err != nil {
				t.Fatal(err)
			}
			card, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(card), `"name":"`+c.name+`"`) {
				t.Fatalf("card of examples/%s: %d %s", c.dir, resp.StatusCode, card)
			}
			var opts []harness.Option
			if c.token != "" {
				opts = append(opts, harness.Bearer(c.token))
			}
			body := `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi there"}]}}}`
			b := harness.At(base, opts...).Do(t, http.MethodPost, body).Raw
			if !strings.Contains(string(b), "TASK_STATE_INPUT_REQUIRED") || !strings.Contains(string(b), c.want) {
				t.Fatalf("SendMessage on examples/%s: %s", c.dir, b)
			}
		})
	}
}

// TestReadmeFirstCaddyfile keeps the README's first Caddyfile the file
// examples/echo/Caddyfile runs (its comment header aside).
func TestReadmeFirstCaddyfile(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(harness.RepoRoot(), "examples", "echo", "Caddyfile"))
	if err != nil {
		t.Fatal(err)
	}
	body := string(src)
	if i := strings.Index(body, "\n{\n"); i >= 0 {
		body = body[i+1:]
	}
	if !strings.Contains(string(readme), "```caddyfile\n"+body+"```\n") {
		t.Errorf("README.md's first Caddyfile is not examples/echo/Caddyfile (from its first '{'):\n%s", body)
	}
}
