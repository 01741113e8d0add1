package a2a

import (
	"bytes"
	"encoding/json"
)

// AgentCard describes an agent: identity, interfaces, capabilities, security
// and skills. It is served at /.well-known/agent-card.json.
type AgentCard struct {
	Name                 string                    `json:"name"`
	Description          string                    `json:"description"`
	SupportedInterfaces  []AgentInterface          `json:"supportedInterfaces"`
	Provider             *AgentProvider            `json:"provider,omitempty"`
	Version              string                    `json:"version"`
	DocumentationURL     string                    `json:"documentationUrl,omitempty"`
	Capabilities         AgentCapabilities         `json:"capabilities"`
	SecuritySchemes      map[string]SecurityScheme `json:"securitySchemes,omitempty"`
	SecurityRequirements []SecurityRequirement     `json:"securityRequirements,omitempty"`
	DefaultInputModes    []string                  `json:"defaultInputModes"`
	DefaultOutputModes   []string                  `json:"defaultOutputModes"`
	Skills               []AgentSkill              `json:"skills"`
	Signatures           []AgentCardSignature      `json:"signatures,omitempty"`
	IconURL              string                    `json:"iconUrl,omitempty"`

	// The A2A 0.3 members of the dual card served with legacy_v03 (RPC-2),
	// next to the 1.0 ones so 0.3 clients resolve the same card; empty
	// otherwise.

	// URL is the 0.3 preferred endpoint.
	URL string `json:"url,omitempty"`
	// PreferredTransport is the 0.3 transport of URL (JSONRPC).
	PreferredTransport string `json:"preferredTransport,omitempty"`
	// ProtocolVersion is the 0.3 protocol version ("0.3.0").
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// AdditionalInterfaces are the 0.3 interfaces (URL and transport).
	AdditionalInterfaces []LegacyInterface `json:"additionalInterfaces,omitempty"`
	// SupportsAuthenticatedExtendedCard is the 0.3 extended-card flag.
	SupportsAuthenticatedExtendedCard *bool `json:"supportsAuthenticatedExtendedCard,omitempty"`
}

// LegacyInterface is an A2A 0.3 AgentInterface of the dual card.
type LegacyInterface struct {
	// URL is where the interface is served.
	URL string `json:"url"`
	// Transport is its 0.3 transport name (JSONRPC, HTTP+JSON, GRPC).
	Transport string `json:"transport"`
}

// Protocol bindings named in AgentInterface.ProtocolBinding.
const (
	BindingJSONRPC  = "JSONRPC"
	BindingHTTPJSON = "HTTP+JSON"
	BindingGRPC     = "GRPC"
	// BindingWebSocket is the custom WebSocket JSON-RPC binding (XPORT-3).
	BindingWebSocket = "websocket"
	// BindingGRPCJSONRPC is the seed system's gRPC JSON-RPC envelope
	// binding (XPORT-6): iac_code.a2a.transports.proto.A2AJsonRpc.
	BindingGRPCJSONRPC = "grpc-jsonrpc"
	// BindingRedisStreams is the Redis Streams JSON-RPC carrier (XPORT-5),
	// advertised only at an explicitly configured URL.
	BindingRedisStreams = "redis-streams"
)

// ProtocolVersion is the A2A version this gateway speaks.
const ProtocolVersion = "1.0"

// AgentInterface is one URL and binding at which the agent is reachable.
type AgentInterface struct {
	URL             string `json:"url"`
	ProtocolBinding string `json:"protocolBinding"`
	Tenant          string `json:"tenant,omitempty"`
	ProtocolVersion string `json:"protocolVersion"`
}

// AgentProvider names the organisation that runs the agent.
type AgentProvider struct {
	Organization string `json:"organization"`
	URL          string `json:"url"`
}

// AgentCapabilities lists optional protocol features; absent means false.
type AgentCapabilities struct {
	Streaming         *bool            `json:"streaming,omitempty"`
	PushNotifications *bool            `json:"pushNotifications,omitempty"`
	Extensions        []AgentExtension `json:"extensions,omitempty"`
	ExtendedAgentCard *bool            `json:"extendedAgentCard,omitempty"`
}

// AgentExtension declares a protocol extension the agent supports.
type AgentExtension struct {
	URI         string         `json:"uri,omitempty"`
	Description string         `json:"description,omitempty"`
	Required    bool           `json:"required,omitempty"`
	Params      map[string]any `json:"params,omitempty"`
}

// AgentSkill is one capability the agent advertises.
type AgentSkill struct {
	ID                   string                `json:"id"`
	Name                 string                `json:"name"`
	Description          string                `json:"description"`
	Tags                 []string              `json:"tags"`
	Examples             []string              `json:"examples,omitempty"`
	InputModes           []string              `json:"inputModes,omitempty"`
	OutputModes          []string              `json:"outputModes,omitempty"`
	SecurityRequirements []SecurityRequirement `json:"securityRequirements,omitempty"`
}

// AgentCardSignature is one detached JWS over the canonical card.
type AgentCardSignature struct {
	Protected string         `json:"protected"`
	Signature string         `json:"signature"`
	Header    map[string]any `json:"header,omitempty"`
}

// SecurityScheme is a oneof: exactly one member is set.
type SecurityScheme struct {
	APIKey        *APIKeySecurityScheme   `json:"apiKeySecurityScheme,omitempty"`
	HTTPAuth      *HTTPAuthSecurityScheme `json:"httpAuthSecurityScheme,omitempty"`
	OAuth2        json.RawMessage         `json:"oauth2SecurityScheme,omitempty"`
	OpenIDConnect json.RawMessage         `json:"openIdConnectSecurityScheme,omitempty"`
	MTLS          json.RawMessage         `json:"mtlsSecurityScheme,omitempty"`
}

// APIKeySecurityScheme is an API key sent in a header, query or cookie.
type APIKeySecurityScheme struct {
	Description string `json:"description,omitempty"`
	Location    string `json:"location"`
	Name        string `json:"name"`
}

// HTTPAuthSecurityScheme is an HTTP Authorization scheme (Bearer, Basic).
type HTTPAuthSecurityScheme struct {
	Description  string `json:"description,omitempty"`
	Scheme       string `json:"scheme"`
	BearerFormat string `json:"bearerFormat,omitempty"`
}

// StringList wraps a list of strings, as ProtoJSON encodes it. It also
// reads a bare JSON array, the form a2a-go (<= v2.3.1) writes and reads
// (see RequirementsBare), so cards of either form parse.
type StringList struct {
	List []string `json:"list"`
}

// UnmarshalJSON reads {"list":[…]} or a bare [...].
func (l *StringList) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		l.List = nil
		return json.Unmarshal(t, &l.List)
	}
	type plain StringList
	return json.Unmarshal(b, (*plain)(l))
}

// RequirementsForm is how a SecurityRequirement writes its scopes.
type RequirementsForm uint8

const (
	// RequirementsProtoJSON writes each scheme's scopes as a ProtoJSON
	// StringList, {"schemes":{"bearerAuth":{"list":[]}}}: the A2A 1.0 form
	// (A2A PR 2046), the default.
	RequirementsProtoJSON RequirementsForm = iota
	// RequirementsBare writes the scopes as a bare array,
	// {"schemes":{"bearerAuth":[]}}: the only form the official Go SDK
	// (a2a-go up to v2.3.1, its issue 430) reads. Not the spec's form.
	RequirementsBare
)

// SecurityRequirement maps scheme names to required scopes; the schemes of
// one requirement are all needed, and any one requirement of a list suffices.
type SecurityRequirement struct {
	Schemes map[string]StringList `json:"schemes"`
	// Form is how MarshalJSON writes Schemes (never itself on the wire).
	// Default: RequirementsProtoJSON.
	Form RequirementsForm `json:"-"`
}

// MarshalJSON writes the requirement in its Form.
func (r SecurityRequirement) MarshalJSON() ([]byte, error) {
	if r.Form != RequirementsBare {
		type plain SecurityRequirement
		return json.Marshal(plain(r))
	}
	schemes := make(map[string][]string, len(r.Schemes))
	for name, l := range r.Schemes {
		schemes[name] = l.List
		if l.List == nil {
			schemes[name] = []string{}
		}
	}
	return json.Marshal(struct {
		Schemes map[string][]string `json:"schemes"`
	}{schemes})
}

// WithRequirementsForm returns a copy of c whose securityRequirements (the
// card's and every skill's) are written in form f; c is not changed.
func (c *AgentCard) WithRequirementsForm(f RequirementsForm) *AgentCard {
	if c == nil {
		return nil
	}
	out := *c
	out.SecurityRequirements = withForm(c.SecurityRequirements, f)
	if c.Skills != nil {
		out.Skills = make([]AgentSkill, len(c.Skills))
		for i, s := range c.Skills {
			s.SecurityRequirements = withForm(s.SecurityRequirements, f)
			out.Skills[i] = s
		}
	}
	return &out
}

// withForm returns a copy of reqs in form f (nil stays nil).
func withForm(reqs []SecurityRequirement, f RequirementsForm) []SecurityRequirement {
	if reqs == nil {
		return nil
	}
	out := make([]SecurityRequirement, len(reqs))
	for i, r := range reqs {
		r.Form = f
		out[i] = r
	}
	return out
}

// Bool returns a pointer to b, for optional fields.
func Bool(b bool) *bool { return &b }
