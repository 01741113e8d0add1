package v03

import (
	"encoding/json"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// AgentCard is an A2A 0.3 Agent Card.
type AgentCard struct {
	// ProtocolVersion is "0.3.0".
	ProtocolVersion string `json:"protocolVersion"`
	// Name, Description and Version identify the agent.
	Name        string `json:"name"`
	Description string `json:"description"`
	// URL is the preferred endpoint, served with PreferredTransport.
	URL string `json:"url"`
	// PreferredTransport is the transport of URL (JSONRPC by default).
	PreferredTransport string `json:"preferredTransport,omitempty"`
	// AdditionalInterfaces lists every endpoint and transport.
	AdditionalInterfaces []a2a.LegacyInterface `json:"additionalInterfaces,omitempty"`
	// IconURL is the agent's icon.
	IconURL string `json:"iconUrl,omitempty"`
	// Provider is the organisation running the agent.
	Provider *a2a.AgentProvider `json:"provider,omitempty"`
	// Version is the agent's version.
	Version string `json:"version"`
	// DocumentationURL is the agent's documentation.
	DocumentationURL string `json:"documentationUrl,omitempty"`
	// Capabilities lists the optional features.
	Capabilities Capabilities `json:"capabilities"`
	// SecuritySchemes are OpenAPI-style schemes ({"type":"http",…}).
	SecuritySchemes map[string]map[string]any `json:"securitySchemes,omitempty"`
	// Security lists the alternatives of required schemes and scopes.
	Security []map[string][]string `json:"security,omitempty"`
	// DefaultInputModes and DefaultOutputModes are the media types.
	DefaultInputModes  []string `json:"defaultInputModes"`
	DefaultOutputModes []string `json:"defaultOutputModes"`
	// Skills are the advertised skills.
	Skills []Skill `json:"skills"`
	// SupportsAuthenticatedExtendedCard says agent/getAuthenticatedExtendedCard is served.
	SupportsAuthenticatedExtendedCard bool `json:"supportsAuthenticatedExtendedCard,omitempty"`
	// Signatures are JWS signatures of the card.
	Signatures []a2a.AgentCardSignature `json:"signatures,omitempty"`
}

// Capabilities is 0.3 AgentCapabilities.
type Capabilities struct {
	// Streaming says message/stream and tasks/resubscribe are served.
	Streaming *bool `json:"streaming,omitempty"`
	// PushNotifications says push configs are accepted.
	PushNotifications *bool `json:"pushNotifications,omitempty"`
	// StateTransitionHistory is a 0.3 flag without a 1.0 counterpart.
	StateTransitionHistory *bool `json:"stateTransitionHistory,omitempty"`
	// Extensions are the supported extensions.
	Extensions []a2a.AgentExtension `json:"extensions,omitempty"`
}

// Skill is a 0.3 AgentSkill.
type Skill struct {
	// ID, Name and Description identify the skill.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Tags, Examples, InputModes and OutputModes describe it.
	Tags        []string `json:"tags"`
	Examples    []string `json:"examples,omitempty"`
	InputModes  []string `json:"inputModes,omitempty"`
	OutputModes []string `json:"outputModes,omitempty"`
}

// jsonrpcURL returns the URL of the card's 1.0 JSON-RPC interface ("" if none).
func jsonrpcURL(c *a2a.AgentCard) string {
	for _, i := range c.SupportedInterfaces {
		if i.ProtocolBinding == a2a.BindingJSONRPC && strings.HasPrefix(i.ProtocolVersion, "1") {
			return i.URL
		}
	}
	return ""
}

// AddDual adds the 0.3 members of the dual card to c (RPC-2): url and
// preferredTransport JSONRPC (the only binding served to 0.3 callers),
// protocolVersion 0.3.0, additionalInterfaces, the extended-card flag,
// and a 0.3 entry in supportedInterfaces. A card without a JSON-RPC
// interface is left alone.
func AddDual(c *a2a.AgentCard) {
	u := jsonrpcURL(c)
	if u == "" {
		return
	}
	c.URL = u
	c.PreferredTransport = a2a.BindingJSONRPC
	c.ProtocolVersion = ProtocolVersion
	c.AdditionalInterfaces = []a2a.LegacyInterface{{URL: u, Transport: a2a.BindingJSONRPC}}
	if c.Capabilities.ExtendedAgentCard != nil && *c.Capabilities.ExtendedAgentCard {
		c.SupportsAuthenticatedExtendedCard = a2a.Bool(true)
	}
	c.SupportedInterfaces = append(c.SupportedInterfaces, a2a.AgentInterface{URL: u, ProtocolBinding: a2a.BindingJSONRPC, ProtocolVersion: "0.3"})
}

// Card03 renders a 1.0 card as a plain, unsigned 0.3 card (the result of
// agent/getAuthenticatedExtendedCard for a 0.3 caller).
func Card03(c *a2a.AgentCard) *AgentCard {
	out := &AgentCard{
		ProtocolVersion: ProtocolVersion, Name: c.Name, Description: c.Description,
		URL: jsonrpcURL(c), PreferredTransport: a2a.BindingJSONRPC, IconURL: c.IconURL,
		Provider: c.Provider, Version: c.Version, DocumentationURL: c.DocumentationURL,
		Capabilities: Capabilities{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			Extensions: c.Capabilities.Extensions},
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		Skills: []Skill{},
		// No signatures: those of c cover its 1.0 canonical form, which a
		// 0.3 verifier does not compute.
	}
	if out.URL != "" {
		out.AdditionalInterfaces = []a2a.LegacyInterface{{URL: out.URL, Transport: a2a.BindingJSONRPC}}
	}
	out.SupportsAuthenticatedExtendedCard = c.Capabilities.ExtendedAgentCard != nil && *c.Capabilities.ExtendedAgentCard
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, Skill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes})
	}
	for name, s := range c.SecuritySchemes {
		if out.SecuritySchemes == nil {
			out.SecuritySchemes = map[string]map[string]any{}
		}
		out.SecuritySchemes[name] = scheme03(s)
	}
	for _, r := range c.SecurityRequirements {
		m := map[string][]string{}
		for name, scopes := range r.Schemes {
			m[name] = append([]string{}, scopes.List...)
		}
		out.Security = append(out.Security, m)
	}
	return out
}

// scheme03 renders a 1.0 security scheme in OpenAPI (0.3) form.
func scheme03(s a2a.SecurityScheme) map[string]any {
	switch {
	case s.APIKey != nil:
		return map[string]any{"type": "apiKey", "in": s.APIKey.Location, "name": s.APIKey.Name}
	case s.HTTPAuth != nil:
		m := map[string]any{"type": "http", "scheme": strings.ToLower(s.HTTPAuth.Scheme)}
		if s.HTTPAuth.BearerFormat != "" {
			m["bearerFormat"] = s.HTTPAuth.BearerFormat
		}
		return m
	}
	for typ, raw := range map[string]json.RawMessage{"oauth2": s.OAuth2, "openIdConnect": s.OpenIDConnect, "mutualTLS": s.MTLS} {
		if len(raw) > 0 {
			m := map[string]any{}
			_ = json.Unmarshal(raw, &m)
			m["type"] = typ
			return m
		}
	}
	return map[string]any{}
}

// Card10 reads a 0.3 card as a 1.0 card: its interfaces (url and
// additionalInterfaces) with protocolVersion 0.3, skills, capabilities
// and signatures (which still cover the 0.3 JSON, not this value).
func Card10(c *AgentCard) *a2a.AgentCard {
	out := &a2a.AgentCard{
		Name: c.Name, Description: c.Description, Version: c.Version, Provider: c.Provider,
		DocumentationURL: c.DocumentationURL, IconURL: c.IconURL,
		Capabilities: a2a.AgentCapabilities{Streaming: c.Capabilities.Streaming, PushNotifications: c.Capabilities.PushNotifications,
			Extensions: c.Capabilities.Extensions},
		DefaultInputModes: c.DefaultInputModes, DefaultOutputModes: c.DefaultOutputModes,
		Skills: []a2a.AgentSkill{}, Signatures: c.Signatures,
	}
	if c.SupportsAuthenticatedExtendedCard {
		out.Capabilities.ExtendedAgentCard = a2a.Bool(true)
	}
	seen := map[string]bool{}
	add := func(u, transport string) {
		if transport == "" {
			transport = a2a.BindingJSONRPC
		}
		if u == "" || seen[transport+" "+u] {
			return
		}
		seen[transport+" "+u] = true
		out.SupportedInterfaces = append(out.SupportedInterfaces, a2a.AgentInterface{URL: u, ProtocolBinding: transport, ProtocolVersion: "0.3"})
	}
	add(c.URL, c.PreferredTransport)
	for _, i := range c.AdditionalInterfaces {
		add(i.URL, i.Transport)
	}
	for _, s := range c.Skills {
		out.Skills = append(out.Skills, a2a.AgentSkill{ID: s.ID, Name: s.Name, Description: s.Description, Tags: s.Tags,
			Examples: s.Examples, InputModes: s.InputModes, OutputModes: s.OutputModes})
	}
	return out
}

// IsCard03 reports whether a card document is a 0.3 card: it has a
// protocolVersion 0.x and no 1.0 supportedInterfaces.
func IsCard03(raw json.RawMessage) bool {
	var head struct {
		ProtocolVersion     string            `json:"protocolVersion"`
		SupportedInterfaces []json.RawMessage `json:"supportedInterfaces"`
		URL                 string            `json:"url"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return false
	}
	return len(head.SupportedInterfaces) == 0 && (strings.HasPrefix(head.ProtocolVersion, "0.") || head.URL != "")
}
