package caddymodule

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// TestAttachmentTypesFollowTheCard: by default the non-text input modes the
// card advertises are accepted as attachments (INPUT-2, CARD-5), besides
// images and audio; an explicit list wins.
func TestAttachmentTypesFollowTheCard(t *testing.T) {
	h := &AgentHandler{Card: &CardHandler{Config: card.Config{InputModes: []string{"text/plain", "application/json", "application/octet-stream"}}}}
	got := h.attachmentTypes()
	for _, want := range []string{"image/*", "audio/*", "application/octet-stream"} {
		if !slices.Contains(got, want) {
			t.Errorf("attachment types %v lack %s", got, want)
		}
	}
	if slices.Contains(got, "application/json") || slices.Contains(got, "text/plain") {
		t.Errorf("text input modes became attachments: %v", got)
	}
	h.AttachmentMediaTypes = []string{"image/png"}
	if got := h.attachmentTypes(); !slices.Equal(got, []string{"image/png"}) {
		t.Errorf("explicit list ignored: %v", got)
	}
}

// TestDefaultCwdInsideRoots: the default workspace must lie inside the
// allowed roots (INPUT-1): default_cwd outside allowed_cwds, or the
// working directory outside them with no default_cwd, is refused naming
// default_cwd; a default inside is used; the handler's workspace denies
// the process's state paths (INPUT-1a).
func TestDefaultCwdInsideRoots(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in, out := filepath.Join(root, "in"), filepath.Join(root, "out")
	for _, d := range []string{filepath.Join(in, "work"), out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("IACCODE_A2A_ALLOWED_CWDS", "")
	for _, tc := range []struct {
		name  string
		h     AgentHandler
		ok    bool
		wantD string
	}{
		{"default inside", AgentHandler{AllowedCwds: []string{in}, DefaultCwd: filepath.Join(in, "work")}, true, filepath.Join(in, "work")},
		{"default outside", AgentHandler{AllowedCwds: []string{in}, DefaultCwd: out}, false, ""},
		{"default missing", AgentHandler{AllowedCwds: []string{in}, DefaultCwd: filepath.Join(in, "missing")}, false, ""},
		{"working dir outside allowed_cwds", AgentHandler{AllowedCwds: []string{in}}, false, ""},
		{"working dir with default roots", AgentHandler{}, true, ""},
	} {
		ws, err := tc.h.workspace()
		if !tc.ok {
			if err == nil || !strings.HasPrefix(err.Error(), "default_cwd: ") || strings.Contains(err.Error(), root) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%s: err = %v, want one line naming default_cwd without the path", tc.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.wantD != "" && ws.Default != tc.wantD {
			t.Errorf("%s: default %q, want %q", tc.name, ws.Default, tc.wantD)
		}
		if ws.Denied != statePaths {
			t.Errorf("%s: the workspace does not deny the process's state paths", tc.name)
		}
	}
}
