package caddya2a_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestArchitectureListsEveryPackage keeps ARCHITECTURE.md true to the
// tree (issue 27 item 8): every non-test package `go list ./...` reports,
// by its path below the module, is named in the document.
func TestArchitectureListsEveryPackage(t *testing.T) {
	doc, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const module = "github.com/caddy-a2a/caddy-a2a"
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		if rel == "" || rel == "tests" || strings.HasPrefix(rel, "tests/") {
			continue // the root module file and the end-to-end tests
		}
		if !strings.Contains(string(doc), rel) {
			t.Errorf("ARCHITECTURE.md does not name the package %s", rel)
		}
	}
}

// TestBindingsHoldTheHandler keeps issue 27 items 1 and 2 true: outside
// package agent (and its test fixtures), no code names the concrete
// *agent.Service — bindings and glue hold an agent.Handler (the service
// behind its interceptors) — and the service knows nothing of A2A 0.3
// (the jsonrpc03 compat binding does).
func TestBindingsHoldTheHandler(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "*.go").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "tests/") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		inAgent := strings.HasPrefix(f, "agent/") && !strings.Contains(strings.TrimPrefix(f, "agent/"), "/")
		if !inAgent && !strings.HasPrefix(f, "agent/agenttest/") && strings.Contains(src, "*agent.Service") {
			t.Errorf("%s names *agent.Service: hold an agent.Handler", f)
		}
		if inAgent && (strings.Contains(src, "LegacyV03") || strings.Contains(src, "a2a/v03")) {
			t.Errorf("%s: package agent must not know A2A 0.3 (agent/binding/jsonrpc03 does)", f)
		}
	}
}
