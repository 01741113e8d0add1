package agent

import (
	"slices"
	"strconv"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Call is what a binding knows about one A2A call besides its request
// value: who calls, for which tenant, at which URL, with which protocol
// version and extensions. Every Service operation takes one; the service
// derives the owner scope from Principal itself (Config.OwnerScope), so no
// binding can reach another scope's tasks.
type Call struct {
	// Principal is the authenticated caller ("" when auth is off).
	Principal string
	// Identity is what the caller's credential says beyond Principal: its
	// OAuth 2.0 scopes and claims (AUTH-8), which limits selectors and
	// skills' requires_scopes check. Nil for credentials without them.
	Identity *Identity
	// Tenant is an A2A tenant the binding read outside the request value
	// (the REST /{tenant}/… path prefix, or the tenant of an operation
	// without a request value such as GetExtendedAgentCard). When set it
	// takes precedence over the request's own tenant field (TURN-10).
	Tenant string
	// ServedTenant is the A2A tenant the endpoint itself serves (the name
	// of an `agent NAME` block, TURN-10): a request naming it is served
	// like one naming none. Empty: the endpoint serves no tenant.
	ServedTenant string
	// BaseURL is the externally visible base URL of the endpoint
	// ("https://h/"), on which artifact links are built (TURN-7). Empty:
	// links have no scheme or host.
	BaseURL string
	// Version is the A2A protocol version the client sent ("" = none,
	// which means 0.3), checked by Negotiate (RPC-2).
	Version string
	// Extensions are the extension URIs the client asked to activate,
	// checked by Negotiate (RPC-3).
	Extensions []string
	// Info, when set, receives the method, task and context of the call as
	// the service learns them (AUTH-6 request variables), and the
	// extensions activated for it (RPC-3), which the binding echoes.
	// Optional.
	Info *RequestInfo
	// Binding is the binding the call came through, the binding label of
	// caddy_a2a_requests_total (BindingJSONRPC, BindingREST, …).
	Binding string
	// LastEventID is the Last-Event-ID a reconnecting stream sent (the
	// HTTP header): a SubscribeToTask resumes after it (RPC-17). Transports
	// without headers send metadata.lastEventId in the request instead.
	LastEventID string
}

// tenant returns the call's tenant, else the request's.
func (c Call) tenant(req string) string {
	if c.Tenant != "" {
		return c.Tenant
	}
	return req
}

// negotiate applies the version and extension rules to a call (RPC-2,
// RPC-3; the negotiateCall interceptor runs it before the operation, and
// before a refused call's error): only Major.Minor 1.0 is served (see
// checkVersion), a missing version means 0.3, which is not supported, and
// every required extension must be requested — for every method, reads
// included. It returns the activated extensions, in the
// order of the configuration, for the binding to echo.
func (s *Service) negotiate(call Call) ([]string, error) {
	if err := checkVersion(call.Version); err != nil {
		return nil, err
	}
	requested := map[string]bool{}
	for _, uri := range call.Extensions {
		requested[uri] = true
	}
	for _, req := range s.cfg.RequiredExtensions {
		if !requested[req] {
			return nil, &a2a.Error{Code: a2a.CodeExtensionSupportRequired, Message: "This agent requires the extension " + req + "; list it in the A2A-Extensions header", Metadata: map[string]string{"extension": req}}
		}
	}
	var active []string
	for _, list := range [][]string{s.cfg.Extensions, s.cfg.RequiredExtensions} {
		for _, uri := range list {
			if requested[uri] && !slices.Contains(active, uri) {
				active = append(active, uri)
			}
		}
	}
	return active, nil
}

// SupportedVersion is the one A2A version (Major.Minor) the gateway's
// interfaces serve; VersionNotSupportedError names it in its
// supportedVersions metadata.
const SupportedVersion = "1.0"

// checkVersion applies RPC-2 (A2A 1.0 §3.6.2) to the version a client
// sent: the request is served when its Major.Minor is 1.0 ("1.0", "1.0.3",
// "1.0.0-rc": a patch number, and a pre-release tag after it, are ignored).
// Any other Major.Minor (1.1, 2.0, 0.3) is VersionNotSupportedError: the
// gateway does not know the semantics of a later minor version. So is a
// value that is not Major.Minor, such as a bare "1" (it names no minor
// version) or garbage. No value (header absent or empty) means 0.3 (§3.6.2:
// "Agents MUST interpret empty value as 0.3 version"), also refused here;
// a binding that serves 0.3 (legacy_v03) routes those calls before this.
func checkVersion(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return versionError("A2A version 0.3 is not supported (no A2A-Version header was sent); send A2A-Version: " + SupportedVersion)
	}
	if majorMinor(v) != SupportedVersion {
		return versionError("A2A version " + truncateHeader(v) + " is not supported; this agent speaks " + SupportedVersion + " (send A2A-Version: " + SupportedVersion + ")")
	}
	return nil
}

// versionError is VersionNotSupportedError with the supported versions.
func versionError(msg string) *a2a.Error {
	return &a2a.Error{Code: a2a.CodeVersionNotSupported, Message: msg, Metadata: map[string]string{"supportedVersions": SupportedVersion}}
}

// majorMinor returns "M.N" of a version "M.N" or "M.N.P…" with M and N
// decimal numbers ("" when v has no such form). Leading zeros are kept
// as written ("01.0" is not "1.0").
func majorMinor(v string) string {
	major, rest, ok := strings.Cut(v, ".")
	if !ok || !isDecimal(major) {
		return ""
	}
	minor, patch, hasPatch := strings.Cut(rest, ".")
	if !isDecimal(minor) || hasPatch && patch == "" {
		return ""
	}
	return major + "." + minor
}

// isDecimal reports whether s is a non-empty run of ASCII digits.
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func truncateHeader(v string) string {
	if len(v) > 16 {
		v = v[:16]
	}
	return strconv.Quote(v)
}

// owner returns the owner id of a principal (see Config.OwnerScope).
func (s *Service) owner(principal string) string {
	if s.cfg.OwnerScope == "" {
		return principal
	}
	return s.cfg.OwnerScope + "/" + principal
}

// principalOf returns the principal of an owner id, for logs.
func (s *Service) principalOf(owner string) string {
	if s.cfg.OwnerScope == "" {
		return owner
	}
	return strings.TrimPrefix(owner, s.cfg.OwnerScope+"/")
}
