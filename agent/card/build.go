package card

import (
	"encoding/json"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
)

func orDefault(v, def []string) []string {
	if len(v) == 0 {
		return slices.Clone(def)
	}
	return slices.Clone(v)
}

// Build returns the Agent Card for cfg and rt. cfg should have passed
// Validate; Build never fails and never includes a credential.
func Build(cfg *Config, rt Runtime) *a2a.AgentCard {
	if cfg == nil {
		cfg = &Config{}
	}
	base := rt.BaseURL
	if base == "" && cfg.PublicURL != "" {
		base = cfg.PublicURL
	}
	if base == "" {
		base = "http://127.0.0.1/"
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	bindings := rt.Bindings
	if len(bindings) == 0 {
		bindings = []string{a2a.BindingJSONRPC, a2a.BindingHTTPJSON}
	}
	c := &a2a.AgentCard{
		Name:               cfg.Name,
		Description:        cfg.Description,
		Version:            cfg.Version,
		DocumentationURL:   cfg.DocumentationURL,
		IconURL:            cfg.IconURL,
		DefaultInputModes:  orDefault(cfg.InputModes, DefaultInputModes),
		DefaultOutputModes: orDefault(cfg.OutputModes, DefaultOutputModes),
		Skills:             []a2a.AgentSkill{},
	}
	if c.Description == "" {
		c.Description = cfg.Name + " A2A agent"
	}
	if c.Version == "" {
		c.Version = DefaultVersion
	}
	if cfg.Provider != nil {
		c.Provider = &a2a.AgentProvider{Organization: cfg.Provider.Organization, URL: cfg.Provider.URL}
	}
	for _, b := range bindings {
		c.SupportedInterfaces = append(c.SupportedInterfaces, a2a.AgentInterface{
			URL: grpcPortURL(interfaceURL(base, b), b, rt.GRPCPort), ProtocolBinding: b, ProtocolVersion: a2a.ProtocolVersion, Tenant: rt.Tenant,
		})
	}
	addInterfaces(c, base, rt)
	for _, s := range cfg.Skills {
		c.Skills = append(c.Skills, a2a.AgentSkill{
			ID: s.ID, Name: s.Name, Description: s.Description,
			Tags:        orDefault(s.Tags, []string{}),
			Examples:    slices.Clone(s.Examples),
			InputModes:  slices.Clone(s.InputModes),
			OutputModes: slices.Clone(s.OutputModes),
		})
	}

	for _, s := range rt.UpstreamSkills {
		if !slices.ContainsFunc(c.Skills, func(x a2a.AgentSkill) bool { return x.ID == s.ID }) {
			s.Tags = orDefault(s.Tags, []string{})
			c.Skills = append(c.Skills, s)
		}
	}

	c.Capabilities = a2a.AgentCapabilities{
		Streaming:         a2a.Bool(true),
		PushNotifications: a2a.Bool(rt.PushNotifications),
	}
	if rt.AuthEnabled() {
		c.Capabilities.ExtendedAgentCard = a2a.Bool(true)
	}
	addExtensions(c, cfg, rt)
	if rt.AuthEnabled() {
		addSecurity(c, rt)
	}
	addSkillScopes(c, cfg, rt.MTLS && rt.MTLSWithBearer) // AUTH-8: after every scheme is declared
	if rt.LegacyV03 {
		v03.AddDual(c)
	}
	if f := cfg.RequirementsForm(); f != a2a.RequirementsProtoJSON {
		c = c.WithRequirementsForm(f) // CARD-4: copies, so upstream skills stay as fetched
	}
	return c
}

// StreamResumeExtension is the URI of resumable streams (RPC-17), the same
// as agent.StreamResumeExtension.
const StreamResumeExtension = "urn:caddy-a2a:stream-resume:v1"

// IdempotentSendExtension is the URI of idempotent sends (RPC-18), the
// same as agent.IdempotentSendExtension.
const IdempotentSendExtension = "urn:caddy-a2a:idempotent-send:v1"

// addExtensions declares the built-in extensions (artifact metadata,
// thinking exposure when on, resumable streams when an event log size is
// set, idempotent sends when a dedupe window is) and the configured ones
// on c.
func addExtensions(c *a2a.AgentCard, cfg *Config, rt Runtime) {
	required := func(uri string) bool { return slices.Contains(cfg.RequiredExtensions, uri) }
	art := cfg.artifactURI()
	c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension{
		URI:         art,
		Description: "Metadata namespace for tool progress, permission decisions, token usage and artifact metadata.",
		Required:    required(art),
		Params:      map[string]any{"namespace": cfg.NamespaceOrDefault()},
	})
	if len(rt.ThinkingTypes) > 0 {
		th := cfg.thinkingURI()
		c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension{
			URI:         th,
			Description: "Exposes agent thinking signals under the metadata namespace.",
			Required:    required(th),
			Params:      map[string]any{"enabledTypes": slices.Clone(rt.ThinkingTypes)},
		})
	}
	if rt.EventLogSize > 0 {
		c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension{
			URI:         StreamResumeExtension,
			Description: "Resumable streams: every task event carries a per-task sequence number as its SSE id; a SubscribeToTask that activates this extension and sends Last-Event-ID (or metadata.lastEventId) replays the events after it, then continues live.",
			Required:    required(StreamResumeExtension),
			Params:      map[string]any{"eventLogSize": rt.EventLogSize, "lastEventIdMetadataKey": "lastEventId"},
		})
	}
	if rt.DedupeWindow > 0 {
		c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension{
			URI:         IdempotentSendExtension,
			Description: "Idempotent sends: a SendMessage or SendStreamingMessage that activates this extension (every send when params.always is true) and reuses a messageId the same caller sent to the same task or context within params.windowSeconds starts no second turn; it answers with the first send's task, and another body under that messageId is invalid params.",
			Required:    required(IdempotentSendExtension),
			Params:      map[string]any{"windowSeconds": int64(rt.DedupeWindow / time.Second), "always": rt.DedupeAlways},
		})
	}
	for _, e := range cfg.Extensions {
		if i := slices.IndexFunc(c.Capabilities.Extensions, func(x a2a.AgentExtension) bool { return x.URI == e.URI }); i >= 0 {
			// An entry naming a built-in extension refines it.
			x := &c.Capabilities.Extensions[i]
			x.Required = x.Required || e.Required
			if e.Description != "" {
				x.Description = e.Description
			}
			for k, v := range e.Params {
				x.Params[k] = v
			}
			continue
		}
		if e.URI == cfg.thinkingURI() {
			continue // thinking exposure is off: not advertised
		}
		c.Capabilities.Extensions = append(c.Capabilities.Extensions, a2a.AgentExtension{
			URI: e.URI, Description: e.Description, Required: e.Required || required(e.URI), Params: e.Params,
		})
	}
}

// addSecurity declares the enabled auth schemes on c, each its own
// security requirement.
func addSecurity(c *a2a.AgentCard, rt Runtime) {
	c.SecuritySchemes = map[string]a2a.SecurityScheme{}
	addReq := func(name string) {
		c.SecurityRequirements = append(c.SecurityRequirements, a2a.SecurityRequirement{
			Schemes: map[string]a2a.StringList{name: {List: []string{}}},
		})
	}
	if rt.Bearer {
		hs := &a2a.HTTPAuthSecurityScheme{Scheme: "Bearer"}
		if rt.BearerJWT {
			hs.BearerFormat = "JWT"
		}
		c.SecuritySchemes[SchemeBearer] = a2a.SecurityScheme{HTTPAuth: hs}
		addReq(SchemeBearer)
	}
	if rt.Basic {
		c.SecuritySchemes[SchemeBasic] = a2a.SecurityScheme{HTTPAuth: &a2a.HTTPAuthSecurityScheme{Scheme: "Basic"}}
		addReq(SchemeBasic)
	}
	if rt.APIKey {
		h := rt.APIKeyHeader
		if h == "" {
			h = "X-API-Key"
		}
		c.SecuritySchemes[SchemeAPIKey] = a2a.SecurityScheme{APIKey: &a2a.APIKeySecurityScheme{Location: "header", Name: h}}
		addReq(SchemeAPIKey)
	}
	if rt.MTLS {
		// AUTH-9: {"mtlsSecurityScheme": {"description": …}}.
		c.SecuritySchemes[SchemeMTLS] = a2a.SecurityScheme{MTLS: json.RawMessage(`{"description":"A client certificate verified by the site's TLS server."}`)}
		if !rt.MTLSWithBearer {
			addReq(SchemeMTLS)
		}
	}
	addIdentitySchemes(c, rt, addReq)
	if rt.MTLS && rt.MTLSWithBearer {
		// AUTH-9 AND: every alternative (all bearer-type under
		// require_with_bearer) also needs the client certificate.
		for _, req := range c.SecurityRequirements {
			req.Schemes[SchemeMTLS] = a2a.StringList{List: []string{}}
		}
	}
}

// interfaceURL is the URL of binding b served at base: base itself for
// the HTTP bindings, the host:port gRPC target for GRPC and grpc-jsonrpc (A2A 1.0 §4.4.6;
// the port defaults to 443 for https, else 80) (XPORT-2, XPORT-6).
func interfaceURL(base, b string) string {
	if b != a2a.BindingGRPC && b != a2a.BindingGRPCJSONRPC {
		return base
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return base
	}
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
