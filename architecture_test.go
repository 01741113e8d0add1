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
