package auth

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// TestJWKSFileTooLarge (AUTH-3): a jwks_file beyond jws.MaxJWKSBytes is
// refused with the limit.
func TestJWKSFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, []byte(strings.Repeat(" ", jws.MaxJWKSBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := readJWKSFile(path)
	if err == nil || !strings.Contains(err.Error(), "jwt jwks_file: jwks: larger than") {
		t.Fatalf("err %v, want the size refusal", err)
	}
}
