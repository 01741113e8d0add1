// Package card builds the public A2A 1.0 Agent Card from operator
// configuration plus runtime facts (interface URLs, auth schemes, push),
// renders it to bytes with a strong ETag, and remembers when each distinct
// rendering was first seen so Last-Modified survives reloads. Handler
// serves it over HTTP (CARD-2, CARD-3, CARD-6).
//
// The package has no Caddy imports; caddymodule maps its configuration onto
// a Handler, and the agent handler reuses the Handler's card for the
// extended card (CARD-8).
package card

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// Well-known extension URIs and defaults.
const (
	// ArtifactMetadataExtension is the iac-code extension naming the metadata
	// namespace used for tool progress, usage and artifact metadata.
	ArtifactMetadataExtension = "urn:iac-code:a2a:artifact-metadata:v1"
	// ThinkingExposureExtension is advertised when thinking exposure is
	// enabled; its params carry enabledTypes.
	ThinkingExposureExtension = "urn:iac-code:a2a:thinking-exposure:v1"
	// GatewayRuntimeExtension is declared only on the authenticated
	// extended card (CARD-8); its params carry the gateway's runtime
	// details (see RuntimeDetails).
	GatewayRuntimeExtension = "urn:caddy-a2a:gateway-runtime:v1"
	// DefaultNamespace is the default metadata namespace.
	DefaultNamespace = "iac_code"
	// DefaultVersion is the agent version used when none is configured.
	DefaultVersion = "1.0.0"
)

// Security scheme names used in securitySchemes and securityRequirements.
const (
	SchemeBearer = "bearerAuth"
	SchemeBasic  = "basicAuth"
	SchemeAPIKey = "apiKeyAuth"
	// SchemeMTLS is the mutual TLS scheme (AUTH-9).
	SchemeMTLS = "mtlsAuth"
)

// DefaultInputModes are the default input media types when none are
// configured.
var DefaultInputModes = []string{"text/plain"}

// DefaultOutputModes are the default output media types when none are
// configured.
var DefaultOutputModes = []string{"text/plain"}

// Provider names the organisation that runs the agent.
type Provider struct {
	// Organization is the provider's name. Required when a provider is set.
	Organization string `json:"organization,omitempty"`
	// URL is the provider's web site (absolute http or https URL). Required
	// when a provider is set.
	URL string `json:"url,omitempty"`
}

// Skill is one capability advertised on the card.
type Skill struct {
	// ID is the unique skill identifier (letters, digits, `_`, `.`, `-`).
	// Required.
	ID string `json:"id,omitempty"`
	// Name is the human-readable name. Required.
	Name string `json:"name,omitempty"`
	// Description says what the skill does. Required.
	Description string `json:"description,omitempty"`
	// Tags are keywords for discovery. At least one is required.
	Tags []string `json:"tags,omitempty"`
	// Examples are sample prompts.
	Examples []string `json:"examples,omitempty"`
	// InputModes overrides the card's default input media types.
	InputModes []string `json:"input_modes,omitempty"`
	// OutputModes overrides the card's default output media types.
	OutputModes []string `json:"output_modes,omitempty"`
	// RequiresScopes are the OAuth 2.0 scopes a caller's token must grant
	// to use the skill (AUTH-8): the card writes them as the skill's
	// securityRequirements (on each scheme that carries scopes: bearerAuth
	// with JWTs, OAuth 2.0 and OpenID Connect schemes), a message whose
	// skill hint (metadata.<namespace>.skill) names the skill is refused
	// with PERMISSION_DENIED naming the missing scopes, and the extended
	// card lists the skill only to callers that hold them all.
	RequiresScopes []string `json:"requires_scopes,omitempty"`
}

// Extension is an additional protocol extension declared on the card.
type Extension struct {
	// URI identifies the extension. Required.
	URI string `json:"uri,omitempty"`
	// Description is a short human-readable explanation.
	Description string `json:"description,omitempty"`
	// Required makes clients list the extension in A2A-Extensions.
	Required bool `json:"required,omitempty"`
	// Params are extension-specific parameters (a JSON object).
	Params map[string]any `json:"params,omitempty"`
}

// Config is the operator-written part of the Agent Card. It is embedded in
// the a2a_card handler's JSON configuration.
type Config struct {
	// Name of the agent. Required.
	Name string `json:"name,omitempty"`
	// Description of the agent. Default: "<name> A2A agent".
	Description string `json:"description,omitempty"`
	// Version of the agent (not of the protocol). Default: 1.0.0.
	Version string `json:"version,omitempty"`
	// Provider is the organisation running the agent. Optional.
	Provider *Provider `json:"provider,omitempty"`
	// DocumentationURL is an absolute http(s) URL of the agent's docs.
	DocumentationURL string `json:"documentation_url,omitempty"`
	// IconURL is an absolute http(s) URL of the agent's icon.
	IconURL string `json:"icon_url,omitempty"`
	// Skills advertised by the agent, in order.
	Skills []Skill `json:"skills,omitempty"`
	// InputModes are the default input media types (defaultInputModes).
	// Default: ["text/plain"].
	InputModes []string `json:"input_modes,omitempty"`
	// OutputModes are the default output media types (defaultOutputModes).
	// Default: ["text/plain"].
	OutputModes []string `json:"output_modes,omitempty"`
	// PublicURL is the externally visible base URL (scheme and host, e.g.
	// https://agent.example.com). When set, every supportedInterfaces URL
	// derives from it; otherwise from the request (TLS, Host, and
	// X-Forwarded-Proto/Host from trusted proxies only).
	PublicURL string `json:"public_url,omitempty"`
	// Namespace is the metadata namespace declared by the artifact-metadata
	// extension. Default: iac_code.
	Namespace string `json:"namespace,omitempty"`
	// ArtifactExtensionURI is the URI of the artifact-metadata extension,
	// always advertised. Default: urn:iac-code:a2a:artifact-metadata:v1.
	ArtifactExtensionURI string `json:"artifact_extension_uri,omitempty"`
	// ThinkingExtensionURI is the URI of the thinking-exposure extension,
	// advertised when thinking exposure is enabled.
	// Default: urn:iac-code:a2a:thinking-exposure:v1.
	ThinkingExtensionURI string `json:"thinking_extension_uri,omitempty"`
	// Extensions are additional extensions to declare. An entry whose URI
	// is the artifact-metadata or thinking-exposure extension refines that
	// built-in entry (description, required, params) instead of adding one.
	Extensions []Extension `json:"extensions,omitempty"`
	// RequiredExtensions lists URIs (of the built-in or additional
	// extensions) that clients must activate; they are marked required.
	RequiredExtensions []string `json:"required_extensions,omitempty"`
	// SecurityRequirementsForm is how the card's securityRequirements (and
	// its skills') are written, on every card served for this agent (the
	// public card, the extended card, their signatures): "protojson", the
	// A2A 1.0 form [{"schemes":{"bearerAuth":{"list":[]}}}], or "a2a-go",
	// [{"schemes":{"bearerAuth":[]}}], the only form the official Go SDK
	// (a2a-go up to v2.3.1) reads: set it when Go clients using that SDK
	// must discover a card with auth. gRPC always carries the proto form.
	// Default: protojson. An `agent NAME` block inherits the site card's
	// value unless its card sets one.
	SecurityRequirementsForm string `json:"security_requirements_form,omitempty"`
}

// Runtime holds the facts the operator never types: where the agent is
// reachable and which features are on.
type Runtime struct {
	// BaseURL is the externally visible base URL, e.g. "https://h/". It is
	// normalised to end with "/".
	BaseURL string
	// Bindings lists the enabled protocol bindings, in preference order.
	// Default: JSONRPC, HTTP+JSON.
	Bindings []string
	// GRPCPort, when set, is the port of the GRPC interface: the gateway's
	// dedicated gRPC listener (grpc listen, issue 29), advertised with the
	// base URL's host. Default: the base URL's port.
	GRPCPort string
	// Interfaces are interfaces at paths of their own (the WebSocket
	// binding), advertised after Bindings. Default: none.
	Interfaces []Interface
	// Bearer, Basic and APIKey say which auth schemes are enabled.
	Bearer, Basic, APIKey bool
	// APIKeyHeader is the API key header name. Default: X-API-Key.
	APIKeyHeader string
	// BearerJWT marks the bearer scheme as taking JWTs (bearerFormat JWT).
	BearerJWT bool
	// MTLS declares the mutual TLS scheme (AUTH-9).
	MTLS bool
	// MTLSWithBearer requires the mutual TLS scheme together with each
	// bearer-type scheme (one securityRequirements entry naming both, an
	// AND) instead of as an alternative (mtls require_with_bearer).
	MTLSWithBearer bool
	// OpenIDConnectURL and OAuth2 declare the identity provider of the
	// bearer JWTs (AUTH-7; see Security).
	OpenIDConnectURL string
	OAuth2           *auth.OAuth2Card
	// PushNotifications is capabilities.pushNotifications.
	PushNotifications bool
	// ThinkingTypes are the enabled thinking-exposure types; non-empty
	// enables the thinking extension.
	ThinkingTypes []string
	// LegacyV03 serves the dual card that A2A 0.3 clients read too
	// (RPC-2, legacy_v03).
	LegacyV03 bool
	// UpstreamSkills are merged after the configured skills (TURN-9: the
	// skills of the agent behind `backend a2a`); a configured skill's id
	// wins.
	UpstreamSkills []a2a.AgentSkill
	// EventLogSize is the per-task event log size of resumable streams
	// (RPC-17); positive advertises StreamResumeExtension with it.
	EventLogSize int
	// DedupeWindow is how long idempotent sends remember a messageId
	// (RPC-18); positive advertises IdempotentSendExtension with it.
	DedupeWindow time.Duration
	// DedupeAlways says every send is deduplicated, activated or not
	// (`dedupe always`), as params.always of IdempotentSendExtension.
	DedupeAlways bool
	// Tenant is the A2A tenant declared on every interface (TURN-10).
	// Default: none.
	Tenant string
}

// AuthEnabled reports whether any auth scheme is on.
func (rt Runtime) AuthEnabled() bool { return rt.Bearer || rt.Basic || rt.APIKey || rt.MTLS }

var (
	skillIDRe   = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)
	namespaceRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)
	mediaTypeRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*/[A-Za-z0-9*][A-Za-z0-9!#$&^_.+*-]*$`)
)

// Validate checks the configuration and returns every problem found, each
// naming the field.
func (c *Config) Validate() error {
	if c == nil {
		return errors.New("card: configuration missing")
	}
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if strings.TrimSpace(c.Name) == "" {
		add("card name: must not be empty")
	}
	if c.Provider != nil {
		if strings.TrimSpace(c.Provider.Organization) == "" {
			add("card provider.organization: must not be empty")
		}
		if err := checkURL(c.Provider.URL, true); err != nil {
			add("card provider.url: %v", err)
		}
	}
	if err := checkURL(c.DocumentationURL, false); err != nil {
		add("card documentation_url: %v", err)
	}
	if err := checkURL(c.IconURL, false); err != nil {
		add("card icon_url: %v", err)
	}
	if c.PublicURL != "" {
		if err := checkPublicURL(c.PublicURL); err != nil {
			add("card public_url: %v", err)
		}
	}
	if err := checkRequirementsForm(c.SecurityRequirementsForm); err != nil {
		errs = append(errs, err)
	}
	if c.Namespace != "" && !namespaceRe.MatchString(c.Namespace) {
		add("card namespace: %q must be an identifier (letters, digits, _)", c.Namespace)
	}
	checkModes := func(field string, modes []string) {
		for _, m := range modes {
			if !mediaTypeRe.MatchString(m) {
				add("card %s: %q is not a media type", field, m)
			}
		}
	}
	checkModes("input_modes", c.InputModes)
	checkModes("output_modes", c.OutputModes)
	validateSkills(c.Skills, add, checkModes)
	for _, uri := range []struct{ field, v string }{
		{"artifact_extension_uri", c.ArtifactExtensionURI},
		{"thinking_extension_uri", c.ThinkingExtensionURI},
	} {
		if uri.v != "" && !isURI(uri.v) {
			add("card %s: %q is not an absolute URI", uri.field, uri.v)
		}
	}
	extSeen := map[string]bool{}
	for i, e := range c.Extensions {
		switch {
		case e.URI == "":
			add("card extensions[%d] uri: must not be empty", i)
		case !isURI(e.URI):
			add("card extensions[%d] uri: %q is not an absolute URI", i, e.URI)
		case extSeen[e.URI]:
			add("card extensions[%d] uri: duplicate extension %q", i, e.URI)
		}
		extSeen[e.URI] = true
	}
	extSeen[c.artifactURI()] = true
	extSeen[c.thinkingURI()] = true
	for _, r := range c.RequiredExtensions {
		if !extSeen[r] {
			add("card required_extensions: %q is not a declared extension", r)
		}
	}
	return errors.Join(errs...)
}

// validateSkills reports the problems of skills through add.
func validateSkills(skills []Skill, add func(format string, args ...any), checkModes func(field string, modes []string)) {
	seen := map[string]bool{}
	for i, s := range skills {
		where := fmt.Sprintf("card skills[%d]", i)
		if s.ID != "" {
			where = fmt.Sprintf("card skill %q", s.ID)
		}
		switch {
		case s.ID == "":
			add("%s id: must not be empty", where)
		case !skillIDRe.MatchString(s.ID):
			add("%s id: only letters, digits, _ . : - are allowed (max 128)", where)
		case seen[s.ID]:
			add("%s id: duplicate skill id", where)
		}
		seen[s.ID] = true
		if strings.TrimSpace(s.Name) == "" {
			add("%s name: must not be empty", where)
		}
		if strings.TrimSpace(s.Description) == "" {
			add("%s description: must not be empty", where)
		}
		if len(s.Tags) == 0 {
			add("%s tags: at least one tag is required", where)
		}
		for _, t := range s.Tags {
			if strings.TrimSpace(t) == "" {
				add("%s tags: empty tag", where)
			}
		}
		for _, sc := range s.RequiresScopes {
			if !a2a.ValidScope(sc) {
				add("%s requires_scopes: %q is not an OAuth 2.0 scope token (printable ASCII without spaces, \" or \\)", where, sc)
			}
		}
		checkModes(where[len("card "):]+" input_modes", s.InputModes)
		checkModes(where[len("card "):]+" output_modes", s.OutputModes)
	}
}

func (c *Config) artifactURI() string {
	if c.ArtifactExtensionURI != "" {
		return c.ArtifactExtensionURI
	}
	return ArtifactMetadataExtension
}

func (c *Config) thinkingURI() string {
	if c.ThinkingExtensionURI != "" {
		return c.ThinkingExtensionURI
	}
	return ThinkingExposureExtension
}

// NamespaceOrDefault returns the configured metadata namespace or iac_code.
func (c *Config) NamespaceOrDefault() string {
	if c.Namespace != "" {
		return c.Namespace
	}
	return DefaultNamespace
}

func isURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Opaque != "" || u.Host != "" || u.Path != "")
}

func checkURL(s string, required bool) error {
	if s == "" {
		if required {
			return errors.New("must not be empty")
		}
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http(s) URL", s)
	}
	if u.User != nil {
		return errors.New("must not contain credentials")
	}
	return nil
}

func checkPublicURL(s string) error {
	if err := checkURL(s, true); err != nil {
		return err
	}
	u, _ := url.Parse(s)
	if IsWildcardHost(u.Hostname()) {
		return fmt.Errorf("%q uses a wildcard address; name a reachable host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return errors.New("must not have a query or fragment")
	}
	return nil
}

// IsWildcardHost reports whether host (without port) is an unspecified
// bind address such as 0.0.0.0 or ::.
func IsWildcardHost(host string) bool {
	h := strings.Trim(host, "[]")
	switch h {
	case "", "0.0.0.0", "::", "0:0:0:0:0:0:0:0", "*":
		return true
	}
	return false
}
