package push

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyRingFileTooLarge (PUSH-3): a key ring file beyond its limit is
// refused as too large, not read in full nor parsed cut short.
func TestKeyRingFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "push.keys")
	if err := os.WriteFile(path, []byte(strings.Repeat(" ", maxKeyRingBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKeyRing(path); err == nil || err.Error() != "the push key ring file is too large" {
		t.Fatalf("err %v, want the too-large refusal", err)
	}
}
