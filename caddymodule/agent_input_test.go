package caddymodule

import (
	"slices"
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
