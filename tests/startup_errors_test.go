package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// startupFails writes a Caddyfile with global options global and the a2a
// block body on a free loopback port, runs `caddy <command>` on it, expects
// a failed exit and returns the one error line of the output (JSON
// escapes undone) after checking that every line is Caddy's JSON log.
func startupFails(t *testing.T, command, global, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	port := strconv.Itoa(harness.FreePort(t))
	cfg := "{\n\tadmin off\n\tpersist_config off\n\thttp_port " + port + "\n" + global + "}\nhttp://127.0.0.1:" + port +
		" {\n\ta2a {\n\t\tcard {\n\t\t\tname boot\n\t\t}\n" + body + "\n\t}\n}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := harness.Run(t, dir, command, "--config", path, "--adapter", "caddyfile")
	if _, exited := err.(*exec.ExitError); !exited {
		t.Fatalf("caddy %s: %v, want a failed start\n%s", command, err, out)
	}
	var errLines []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") && !strings.HasPrefix(line, "Error:") {
			t.Errorf("caddy %s: a line outside the JSON log: %q", command, line)
		}
		if strings.Contains(line, `"level":"error"`) {
			errLines = append(errLines, strings.ReplaceAll(line, `\"`, `"`))
		}
	}
	if len(errLines) != 1 {
		t.Fatalf("caddy %s: %d error lines, want one\n%s", command, len(errLines), out)
	}
	return errLines[0]
}

// wantAll fails the test unless line contains every one of want.
func wantAll(t *testing.T, line string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(line, w) {
			t.Errorf("the error line lacks %q:\n%s", w, line)
		}
	}
}

// OPS-9: a data directory that cannot be created is named, with the OS
// reason, on the one error line of `caddy run`.
func TestStartupErrorDataDir(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(file, "data")
	line := startupFails(t, "run", "\ta2a {\n\t\tdata_dir "+dir+"\n\t}\n", "")
	wantAll(t, line, "data_dir", dir, "not a directory")
}

// OPS-9: a Redis store that cannot be reached is one line naming its
// address without the password, and go-redis prints nothing of its own.
func TestStartupErrorRedisUnreachable(t *testing.T) {
	t.Parallel()
	global := "\ta2a {\n\t\tdata_dir " + t.TempDir() + "\n\t\tstore redis {\n\t\t\turl redis://user:s3cret@127.0.0.1:1/0\n\t\t}\n\t}\n"
	line := startupFails(t, "run", global, "")
	wantAll(t, line, "redis://127.0.0.1:1/0", "redis unreachable", "connection refused")
	if strings.Contains(line, "s3cret") || strings.Contains(line, "user") {
		t.Errorf("the error line holds the credentials:\n%s", line)
	}
}

// OPS-9: the push queue and redis_rpc name their Redis too, without the
// password.
func TestStartupErrorRedisCarriers(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"push queue": "\t\tpush {\n\t\t\tqueue redis-streams {\n\t\t\t\tredis_url redis://:s3cret@127.0.0.1:1/0\n\t\t\t}\n\t\t}",
		"redis_rpc":  "\t\tredis_rpc {\n\t\t\turl redis://:s3cret@127.0.0.1:1/0\n\t\t}",
	} {
		t.Run(name, func(t *testing.T) {
			line := startupFails(t, "run", "\ta2a {\n\t\tdata_dir "+t.TempDir()+"\n\t}\n", body)
			wantAll(t, line, "redis://127.0.0.1:1/0", "connection refused")
			if strings.Contains(line, "s3cret") {
				t.Errorf("the error line holds the password:\n%s", line)
			}
		})
	}
}

// OPS-9: an exec program that cannot be started fails `caddy validate`
// (provision), naming the program and the reason, instead of the first
// turn.
func TestStartupErrorExecProgram(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-agent")
	line := startupFails(t, "validate", "", "\t\tbackend exec "+missing+" --json")
	wantAll(t, line, "backend exec: program", missing, "no such file or directory")
	line = startupFails(t, "validate", "", "\t\tbackend exec no-such-agent-xyz")
	wantAll(t, line, `"no-such-agent-xyz"`, "not found in $PATH")
}

// OPS-9: an unknown backend lists the registered ones, in a Caddyfile
// (adapt) and in a JSON config (provision).
func TestStartupErrorUnknownBackend(t *testing.T) {
	t.Parallel()
	const want = `unknown backend "nosuch" (want one of: a2a, echo, exec, http, openai)`
	line := startupFails(t, "validate", "", "\t\tbackend nosuch")
	wantAll(t, line, want)
	dir := t.TempDir()
	path := filepath.Join(dir, "caddy.json")
	cfg := `{"admin":{"disabled":true},"apps":{"http":{"servers":{"s":{"listen":["127.0.0.1:` + strconv.Itoa(harness.FreePort(t)) +
		`"],"routes":[{"handle":[{"handler":"a2a","backend":{"backend":"nosuch"}}]}]}}}}}`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := harness.Run(t, dir, "validate", "--config", path)
	if _, exited := err.(*exec.ExitError); !exited || !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), want) {
		t.Fatalf("caddy validate (JSON): %v, want a failure naming the backends\n%s", err, out)
	}
}
