package card

import (
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// TestUnbumpedVersionWarningNamesVersion: the reload warning for a card
// changed without a version bump names the version the card advertises,
// the default 1.0.0 when none is configured (never an empty one).
func TestUnbumpedVersionWarningNamesVersion(t *testing.T) {
	core, logs := observer.New(zap.WarnLevel)
	name := "unbumped-" + t.Name()
	h := &Handler{logger: zap.New(core)}
	h.cfg.Name, h.cfg.Description = name, "first"
	h.warnUnbumpedVersion()
	h.cfg.Description = "second"
	h.warnUnbumpedVersion()
	entries := logs.FilterMessageSnippet("did not").All()
	if len(entries) != 1 {
		t.Fatalf("want one warning, got %d", len(entries))
	}
	if v := entries[0].ContextMap()["version"]; v != DefaultVersion {
		t.Fatalf("warning names version %q, want %q", v, DefaultVersion)
	}
	// An explicit "1.0.0" is the same version as none: still unbumped.
	h.cfg.Version, h.cfg.Description = "1.0.0", "third"
	h.warnUnbumpedVersion()
	if n := logs.FilterMessageSnippet("did not").Len(); n != 2 {
		t.Fatalf("explicit default version: %d warnings, want 2", n)
	}
}
