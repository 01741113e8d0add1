package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestListModules(t *testing.T) {
	t.Parallel()
	out, err := harness.Run(t, t.TempDir(), "list-modules")
	if err != nil {
		t.Fatalf("list-modules: %v\n%s", err, out)
	}
	for _, m := range []string{"http.handlers.a2a", "http.handlers.a2a_card", "http.handlers.a2a_auth", "http.handlers.a2a_health"} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.TrimSpace(line) == m {
				found = true
			}
		}
		if !found {
			t.Errorf("list-modules lacks %s", m)
		}
	}
}

// TestAdaptExample validates Caddyfile.example as shipped, from the
// checkout, with its data directory pointed at a temp dir: validation
// creates neither that directory nor ./data in the checkout (OPS-6; tests
// write only under temp dirs).
func TestAdaptExample(t *testing.T) {
	t.Parallel()
	repoData := filepath.Join(harness.RepoRoot(), "data")
	_, statErr := os.Stat(repoData)
	hadRepoData := statErr == nil
	dataDir := filepath.Join(t.TempDir(), "data")
	cmd := exec.Command(harness.Binary(t), "adapt", "--config", "Caddyfile.example", "--validate")
	cmd.Dir = harness.RepoRoot()
	cmd.Env = harness.Env(t.TempDir(), "A2A_DATA_DIR="+dataDir)
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("adapt Caddyfile.example: %v\n%s", err, out)
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("adapt --validate created the data directory (stat: %v)", err)
	}
	if _, err := os.Stat(repoData); !hadRepoData && !os.IsNotExist(err) {
		t.Errorf("adapt --validate created %s in the checkout", repoData)
	}
	for _, want := range []string{`"handler":"a2a_health"`, `"handler":"a2a_card"`, `"handler":"a2a_auth"`, `"handler":"a2a"`, `"name":"iac-code"`,
		`"id":"iac_generation"`, `"id":"iac_review"`, `"id":"aliyun_ros_operations"`, `"id":"terraform_ros_conversion"`} {
		if !strings.Contains(out, want) {
			t.Errorf("adapted example lacks %s", want)
		}
	}
}

func TestBadCaddyfilesRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, site, want string
	}{
		{"empty card name", "a2a {\n card {\n description x\n }\n}", "card name: must not be empty"},
		{"skill without tags", "a2a {\n card {\n name x\n skill s {\n name S\n description \"Does things well.\"\n }\n }\n}", `skill "s" tags`},
		{"unknown subdirective", "a2a {\n card {\n name x\n }\n frobnicate\n}", `unknown a2a subdirective "frobnicate"`},
		{"bad provider url", "a2a {\n card {\n name x\n provider Org notaurl\n }\n}", "provider.url"},
		{"basic without password", "a2a {\n card {\n name x\n }\n auth {\n basic alice\n }\n}", "password (or bcrypt hash) required"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { wantAdaptError(t, tc.site, tc.want) })
	}
}

// wantAdaptError fails unless `caddy adapt` refuses site (in a site
// block on http://127.0.0.1:1) with an error naming want.
func wantAdaptError(t *testing.T, site, want string) {
	t.Helper()
	out, err := harness.Adapt(t, "http://127.0.0.1:1 {\n"+site+"\n}\n")
	if err == nil {
		t.Fatalf("adapt accepted a bad Caddyfile:\n%s", out)
	}
	if !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), want) {
		t.Errorf("error does not name the problem %q:\n%s", want, out)
	}
}

func TestProvisionErrorsRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, site, want, secret string
	}{
		{"token clash", "a2a {\n card {\n name x\n }\n auth {\n bearer sup3r-secret\n principal ci bearer sup3r-secret\n }\n}", `principal "ci" token: same token as default principal`, "sup3r-secret"},
		{"empty placeholder", "a2a {\n card {\n name x\n }\n auth {\n bearer {env.A2A_TEST_UNSET_VAR}\n }\n}", "token: resolved to an empty value", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "Caddyfile")
			cfg := "{\n admin off\n persist_config off\n}\nhttp://127.0.0.1:1 {\n" + tc.site + "\n}\n"
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := harness.Run(t, dir, "validate", "--config", path, "--adapter", "caddyfile")
			if err == nil {
				t.Fatalf("validate accepted a bad config:\n%s", out)
			}
			if !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), tc.want) {
				t.Errorf("error does not name the problem %q:\n%s", tc.want, out)
			}
			if tc.secret != "" && strings.Contains(out, tc.secret) {
				t.Errorf("error output leaks the secret:\n%s", out)
			}
		})
	}
}

func TestRedisHarness(t *testing.T) {
	t.Parallel()
	addr := harness.StartRedis(t)
	if r, err := harness.RedisCommand(addr, "SET", "k", "hello world"); err != nil || r != "+OK" {
		t.Fatalf("SET = %q, %v", r, err)
	}
	if r, err := harness.RedisCommand(addr, "GET", "k"); err != nil || r != "hello world" {
		t.Fatalf("GET = %q, %v", r, err)
	}
	if r, err := harness.RedisCommand(addr, "GET", "missing"); err != nil || r != "(nil)" {
		t.Fatalf("GET missing = %q, %v", r, err)
	}
}
