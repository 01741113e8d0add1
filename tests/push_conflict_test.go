package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestPushConflictingSitesRefused: two sites sharing a data directory share
// one push engine, so different delivery settings (here the address
// allow-list, PUSH-2) are refused at provision rather than the last site
// silently deciding for both.
func TestPushConflictingSitesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	site := func(host, allow string) string {
		return `http://` + host + ` {
	a2a {
		card {
			name agent-` + strings.ReplaceAll(host, ":", "-") + `
		}
		push {
			queue local-file
			allow_private_networks ` + allow + `
		}
	}
}
`
	}
	write := func(body string) string {
		p := filepath.Join(dir, "Caddyfile")
		cfg := "{\n\tadmin off\n\ta2a {\n\t\tdata_dir " + filepath.Join(dir, "data") + "\n\t}\n}\n" + body
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write(site("127.0.0.1:18501", "127.0.0.0/8") + site("localhost:18501", "10.0.0.0/8"))
	out, err := harness.Run(t, dir, "validate", "--config", bad, "--adapter", "caddyfile")
	if err == nil || !strings.Contains(out, "must use the same push settings") {
		t.Fatalf("conflicting push settings accepted (err %v):\n%s", err, out)
	}
	good := write(site("127.0.0.1:18501", "127.0.0.0/8") + site("localhost:18501", "127.0.0.0/8"))
	if out, err := harness.Run(t, dir, "validate", "--config", good, "--adapter", "caddyfile"); err != nil {
		t.Fatalf("identical push settings refused: %v\n%s", err, out)
	}
}
