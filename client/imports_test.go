package client

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestNoServerImports keeps the client library off the server side (issue
// 27): nothing of agent/auth (bcrypt, JWT), agent/card, the service, the
// stores, push or Caddy is linked into it; what both sides need lives in
// shared packages (agent/a2a, agent/jws, internal/...).
func TestNoServerImports(t *testing.T) {
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	const mod = "github.com/caddy-a2a/caddy-a2a/"
	forbidden := []string{mod + "agent/auth", mod + "agent/card", mod + "agent/store", mod + "push", mod + "caddymodule",
		"github.com/caddyserver/", "golang.org/x/crypto/bcrypt", "github.com/golang-jwt/"}
	for _, dep := range strings.Fields(string(out)) {
		if dep == mod+"agent" {
			t.Errorf("client depends on the service package %s", dep)
		}
		for _, f := range forbidden {
			if dep == f || strings.HasPrefix(dep, f+"/") || (strings.HasSuffix(f, "/") && strings.HasPrefix(dep, f)) {
				t.Errorf("client depends on server-side %s", dep)
			}
		}
	}
}
