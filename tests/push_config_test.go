package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestPushConfigErrors (PUSH-1, PUSH-6): a JSON config's push values are
// refused with what is wrong (zero means the default, so a negative count
// "must not be negative", never "must be at least 1"), and the Caddyfile's
// push block is checked by the same rules when it is adapted.
func TestPushConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct{ push, want string }{
		"negative attempts": {`{"max_attempts":-1}`, "push: max_attempts must not be negative"},
		"negative configs":  {`{"max_configs_per_task":-2}`, "push: max_configs_per_task must not be negative"},
		"negative lease":    {`{"queue":"redis-streams","redis":{"redis_url":"redis://127.0.0.1:1","lease_timeout_ms":-5}}`, "push: lease_timeout_ms must not be negative"},
		"no redis url":      {`{"queue":"redis-streams"}`, "push: queue redis-streams needs redis_url"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := `{"admin":{"disabled":true},"apps":{"a2a":{"data_dir":"` + filepath.Join(dir, "data") + `"},
"http":{"servers":{"s":{"listen":["127.0.0.1:18502"],"routes":[{"handle":[{"handler":"a2a","push":` + tc.push + `}]}]}}}}}`
			path := filepath.Join(t.TempDir(), "caddy.json")
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := harness.Run(t, dir, "validate", "--config", path)
			if err == nil || !strings.Contains(out, tc.want) {
				t.Fatalf("want %q (err %v):\n%s", tc.want, err, out)
			}
			if strings.Contains(out, "at least 1") || strings.Contains(out, "must be positive") {
				t.Errorf("the error misstates the rule:\n%s", out)
			}
		})
	}
	site := "http://127.0.0.1:18502 {\n a2a {\n  card {\n   name x\n  }\n  push {\n   retry_initial 5s\n   retry_max 1s\n  }\n }\n}\n"
	out, err := harness.Adapt(t, site)
	if err == nil || !strings.Contains(out, "retry_initial must not exceed retry_max") {
		t.Fatalf("adapt accepted retry_initial above retry_max (err %v):\n%s", err, out)
	}
}
