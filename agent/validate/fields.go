package validate

import (
	"fmt"
	"slices"
	"strings"
)

// genericNames are names that tell a router nothing.
var genericNames = []string{
	"ai assistant", "assistant", "agent", "ai agent", "my agent", "chatbot", "bot",
	"helper", "test agent", "a2a agent", "llm agent", "my assistant", "default agent",
}

// v0Fields maps pre-1.0 top-level fields to their v1.0 replacement.
var v0Fields = []struct{ field, replacement, fix string }{
	{"url", "/supportedInterfaces/0/url", `move it into supportedInterfaces: [{"url": …, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]; the first entry is preferred`},
	{"preferredTransport", "/supportedInterfaces", "express the preference by ordering supportedInterfaces (first = preferred)"},
	{"additionalInterfaces", "/supportedInterfaces", "list every interface in supportedInterfaces, each with url, protocolBinding and protocolVersion"},
	{"protocolVersion", "/supportedInterfaces/*/protocolVersion", `set protocolVersion ("1.0") on each supportedInterfaces entry`},
	{"supportsAuthenticatedExtendedCard", "/capabilities/extendedAgentCard", "use capabilities.extendedAgentCard"},
}

// required reports missing required top-level fields.
func (c *checker) required(card map[string]any) {
	for _, f := range []struct{ name, fix string }{
		{"name", `add "name": a short, specific human-readable name`},
		{"description", `add "description": what the agent does and when to call it`},
		{"version", `add "version": the agent's own version, e.g. "1.0.0" (bump it whenever the card changes)`},
	} {
		if s, ok := str(card, f.name); !ok || strings.TrimSpace(s) == "" {
			c.add(Error, Pointer(f.name), "required field "+f.name+" is missing or empty", f.fix)
		}
	}
	if _, ok := card["capabilities"].(map[string]any); !ok {
		c.add(Error, "/capabilities", "required field capabilities is missing or not an object",
			`add "capabilities": {"streaming": false, "pushNotifications": false, "extendedAgentCard": false}`)
	}
	for _, f := range []string{"supportedInterfaces", "defaultInputModes", "defaultOutputModes"} {
		arr, ok := card[f].([]any)
		if !ok || len(arr) == 0 {
			fix := `add "` + f + `": ["text/plain"] (media types), required in v1.0`
			if f == "supportedInterfaces" {
				fix = `add "supportedInterfaces": [{"url": "https://…", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]`
			}
			c.add(Error, Pointer(f), "required field "+f+" is missing or empty", fix)
		}
	}
	switch s := card["skills"].(type) {
	case []any:
		if len(s) == 0 {
			c.add(Warning, "/skills", "the card declares no skills", "add at least one skill with id, name, description and tags so routers can match tasks")
		}
	default:
		c.add(Error, "/skills", "required field skills is missing or not an array", `add "skills": [{"id": …, "name": …, "description": …, "tags": […]}]`)
	}
}

// texts reports a generic name and a too-short description.
func (c *checker) texts(card map[string]any) {
	if name, ok := str(card, "name"); ok && slices.Contains(genericNames, strings.ToLower(strings.TrimSpace(name))) {
		c.add(Warning, "/name", fmt.Sprintf("name %q is generic and gives routers nothing to tell agents apart", name),
			"use a specific name that says what the agent does, e.g. \"GeoSpatial Route Planner\"")
	}
	if d, ok := str(card, "description"); ok && strings.TrimSpace(d) != "" && len([]rune(strings.TrimSpace(d))) < 20 {
		c.add(Warning, "/description", "description is shorter than 20 characters",
			"state the task domain, main capabilities and limits so routers can match tasks")
	}
}

// v0 reports pre-1.0 fields, with their v1.0 replacement.
func (c *checker) v0(card map[string]any) {
	_, hasIfaces := card["supportedInterfaces"].([]any)
	for _, f := range v0Fields {
		if _, ok := card[f.field]; !ok {
			continue
		}
		sev := Error
		if f.field == "supportsAuthenticatedExtendedCard" {
			if caps, ok := card["capabilities"].(map[string]any); ok {
				if _, ok := caps["extendedAgentCard"]; ok {
					sev = Warning
				}
			}
		} else if hasIfaces {
			sev = Warning
		}
		c.add(sev, Pointer(f.field), fmt.Sprintf("%s is a v0.x field; v1.0 uses %s", f.field, f.replacement), f.fix)
	}
	if caps, ok := card["capabilities"].(map[string]any); ok {
		if _, ok := caps["stateTransitionHistory"]; ok {
			c.add(Warning, "/capabilities/stateTransitionHistory", "capabilities.stateTransitionHistory was removed in v1.0",
				"remove it; model the behaviour as an extension if you need it")
		}
	}
}
