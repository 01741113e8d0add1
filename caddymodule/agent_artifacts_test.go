package caddymodule

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent"
)

// TURN-7: inline_artifact_bytes takes a size (default 64 KiB) and rejects
// anything else.
func TestInlineArtifactBytesOption(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\n\tcard {\n\t\tname x\n\t}\n\tinline_artifact_bytes 1KiB\n}")
	if err != nil || hs.agent == nil || hs.agent.InlineArtifactBytes != 1024 {
		t.Fatalf("inline_artifact_bytes 1KiB: %v %+v", err, hs)
	}
	hs, err = parseBlock(t, "a2a {\n\tcard {\n\t\tname x\n\t}\n\tbackend echo\n}")
	if err != nil || hs.agent.InlineArtifactBytes != 0 || agent.DefaultInlineArtifactBytes != 64<<10 {
		t.Fatalf("default: %v %d", err, hs.agent.InlineArtifactBytes)
	}
	for _, bad := range []string{"inline_artifact_bytes", "inline_artifact_bytes 0", "inline_artifact_bytes lots", "inline_artifact_bytes 1KiB 2KiB"} {
		if _, err := parseBlock(t, "a2a {\n\tcard {\n\t\tname x\n\t}\n\t"+bad+"\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
