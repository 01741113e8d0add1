package caddymodule

import (
	"strings"
	"testing"
)

// OPS-9: an unknown backend is refused with the valid names, in the
// Caddyfile and in JSON.
func TestUnknownBackendNamesTheValidOnes(t *testing.T) {
	want := `unknown backend "nosuch" (want one of: a2a, echo, exec, http, openai)`
	_, err := parseBlock(t, "a2a {\n\tcard {\n\t\tname t\n\t}\n\tbackend nosuch\n}")
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Caddyfile: %v, want %q", err, want)
	}
	if err := knownBackend("nosuch"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("JSON: %v, want %q", err, want)
	}
	if err := knownBackend("exec"); err != nil {
		t.Fatalf("exec: %v", err)
	}
}
