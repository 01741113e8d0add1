package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// Validate checks the option values that need no provisioning (RPC-11
// subscribe_idle_timeout, artifact_urls, thinking_exposure, AUTH-4
// owner_scope) on an unprovisioned handler.
func TestAgentHandlerValidate(t *testing.T) {
	unknown := []string{"tool_trace", "mind"}
	known := []string{"raw_thinking"}
	cases := []struct {
		name string
		h    AgentHandler
		want string // "" = valid
	}{
		{"defaults", AgentHandler{}, ""},
		{"negative subscribe_idle_timeout", AgentHandler{SubscribeIdleTimeout: caddy.Duration(-1)}, "subscribe_idle_timeout: must be a positive duration"},
		{"artifact_urls s3", AgentHandler{ArtifactURLs: "s3"}, `artifact_urls: must be http or file, not "s3"`},
		{"artifact_urls file", AgentHandler{ArtifactURLs: "file"}, ""},
		{"thinking_exposure unknown", AgentHandler{ThinkingExposure: &unknown}, `thinking_exposure: unknown type "mind"`},
		{"thinking_exposure raw", AgentHandler{ThinkingExposure: &known}, ""},
		{"owner_scope slash", AgentHandler{OwnerScope: "a/b"}, "owner_scope: must not contain '/'"},
		{"card name slash", AgentHandler{Card: &CardHandler{Config: card.Config{Name: "a/b"}}}, "owner_scope: must not contain '/'"},
		{"owner_scope off", AgentHandler{OwnerScope: "-", Card: &CardHandler{Config: card.Config{Name: "a/b"}}}, ""},
	}
	for _, c := range cases {
		err := c.h.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

// thinkingExposure keeps the defaults: tool traces only without the
// option, neither with an empty list.
func TestAgentHandlerThinkingExposure(t *testing.T) {
	none := []string{}
	both := []string{"raw_thinking", "tool_trace"}
	for _, c := range []struct {
		in        *[]string
		tool, raw bool
	}{{nil, true, false}, {&none, false, false}, {&both, true, true}} {
		tool, raw, err := (&AgentHandler{ThinkingExposure: c.in}).thinkingExposure()
		if err != nil || tool != c.tool || raw != c.raw {
			t.Errorf("thinkingExposure(%v) = %v, %v, %v; want %v, %v", c.in, tool, raw, err, c.tool, c.raw)
		}
	}
}
