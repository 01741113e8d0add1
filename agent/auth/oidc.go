package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// OpenID Connect discovery limits and defaults (AUTH-7).
const (
	// DefaultDiscoveryTimeout bounds discovery at provision and each key
	// fetch.
	DefaultDiscoveryTimeout = 10 * time.Second
	// MaxDiscoveryTimeout bounds discovery_timeout.
	MaxDiscoveryTimeout = time.Minute
	// MinJWKSRefreshInterval bounds jwks_refresh_interval from below.
	MinJWKSRefreshInterval = time.Second
	// maxDiscoveryBytes bounds the discovery document.
	maxDiscoveryBytes = 256 << 10
	// WellKnownOpenIDConfiguration is the discovery path below an issuer.
	WellKnownOpenIDConfiguration = "/.well-known/openid-configuration"
)

// OIDC configures OpenID Connect discovery for JWT (AUTH-7): the keys of
// the issuer are found through its discovery document and refreshed when
// the issuer rotates them. Its fields sit in the jwt object itself.
type OIDC struct {
	// OIDCIssuer is the issuer URL of an OpenID provider (Keycloak realm,
	// Entra tenant, Okta, Auth0, …), e.g.
	// https://idp.example.com/realms/agents. At provision the gateway reads
	// <issuer>/.well-known/openid-configuration, requires its `issuer` to
	// be exactly this value (issuer mix-up defence) and takes its
	// `jwks_uri`; tokens must then carry this `iss` unless `issuer` says
	// otherwise. A provider that cannot be reached within
	// discovery_timeout fails the start (or the reload) with an error
	// naming this URL. Not with jwks_url.
	OIDCIssuer string `json:"oidc_issuer,omitempty"`
	// DiscoveryTimeout bounds discovery at provision and each key fetch.
	// Default: 10s; at most 1m.
	DiscoveryTimeout Duration `json:"discovery_timeout,omitempty"`
	// JWKSRefreshInterval is the least time between two fetches of the
	// issuer's keys: a token whose `kid` is unknown triggers one fetch (a
	// key rotation), at most this often. Default: 30s; at least 1s.
	JWKSRefreshInterval Duration `json:"jwks_refresh_interval,omitempty"`
	// JWKSCacheTTL is how long fetched keys are used before they are
	// fetched again. Default: 10m.
	JWKSCacheTTL Duration `json:"jwks_cache_ttl,omitempty"`
	// JWKSMaxStale is how long past jwks_cache_ttl the last keys fetched
	// are still used while the issuer cannot be reached (an outage of the
	// identity provider); after that every token is refused until a fetch
	// succeeds. Default: 24h.
	JWKSMaxStale Duration `json:"jwks_max_stale,omitempty"`
	// AllowPrivateNetworks lists CIDRs (or IPs) the discovery document and
	// key URLs may reach although they are not public addresses (an
	// identity provider on the intranet or on loopback in tests). Every
	// other non-public address is refused (SSRF guard). Default: none.
	AllowPrivateNetworks []string `json:"allow_private_networks,omitempty"`
	// OAuth2 declares OAuth 2.0 flows on the agent card (the
	// oauth2SecurityScheme), for identity providers without discovery or
	// for clients that do not read it. It changes no check.
	OAuth2 *OAuth2Card `json:"oauth2,omitempty"`
}

// OpenIDConnectURL is the discovery URL of o's issuer (empty without
// one), as the card's openIdConnectSecurityScheme declares it.
func (o *OIDC) OpenIDConnectURL() string {
	if o == nil || o.OIDCIssuer == "" {
		return ""
	}
	return strings.TrimSuffix(o.OIDCIssuer, "/") + WellKnownOpenIDConfiguration
}

// ValidateOIDC checks the OIDC options that need no network, so a config
// can be checked before it is provisioned.
func (c *JWT) ValidateOIDC() error {
	o := &c.OIDC
	if o.OIDCIssuer == "" {
		if o.DiscoveryTimeout != 0 || o.JWKSRefreshInterval != 0 || o.JWKSCacheTTL != 0 || o.JWKSMaxStale != 0 || len(o.AllowPrivateNetworks) > 0 {
			return errors.New("jwt: discovery_timeout, jwks_refresh_interval, jwks_cache_ttl, jwks_max_stale and allow_private_networks need oidc_issuer")
		}
		return o.OAuth2.Validate()
	}
	if c.JWKSURL != "" {
		return errors.New("jwt: set oidc_issuer or jwks_url, not both")
	}
	if _, err := issuerURL(o.OIDCIssuer); err != nil {
		return err
	}
	if d := time.Duration(o.DiscoveryTimeout); d < 0 || d > MaxDiscoveryTimeout {
		return fmt.Errorf("jwt discovery_timeout: must be between 0 and %v", MaxDiscoveryTimeout)
	}
	if d := time.Duration(o.JWKSRefreshInterval); d != 0 && d < MinJWKSRefreshInterval {
		return fmt.Errorf("jwt jwks_refresh_interval: must be at least %v", MinJWKSRefreshInterval)
	}
	if o.JWKSCacheTTL < 0 || o.JWKSMaxStale < 0 {
		return errors.New("jwt jwks_cache_ttl, jwks_max_stale: must not be negative")
	}
	if _, err := push.ParseCIDRs(o.AllowPrivateNetworks...); err != nil {
		return fmt.Errorf("jwt allow_private_networks: %w", err)
	}
	return o.OAuth2.Validate()
}

// issuerURL parses an issuer: an absolute http(s) URL without user
// information, query or fragment (OpenID Connect Discovery §2).
func issuerURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") ||
		u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return nil, errors.New("jwt oidc_issuer: must be an absolute http(s) URL without user information, query or fragment")
	}
	return u, nil
}

// redact is scheme://host/path of u: what errors and logs may show.
func redact(u *url.URL) string { return u.Scheme + "://" + u.Host + u.EscapedPath() }

// oidcMetadata is the part of a discovery document the gateway reads.
type oidcMetadata struct {
	Issuer  string `json:"issuer"`
	JWKSURI string `json:"jwks_uri"`
}

// discovery is what provisioning an oidc_issuer yields: the issuer the
// tokens must name and its key set.
type discovery struct {
	issuer string
	keys   *jws.RemoteJWKS
}

// discoverOIDC reads the discovery document of c's issuer through the SSRF
// guard, checks it (exact issuer, a jwks_uri the guard allows) and fetches
// the keys once, all within the discovery timeout. Errors name the
// issuer URL, never a credential.
func discoverOIDC(ctx context.Context, c *JWT) (*discovery, []string, error) {
	if err := c.ValidateOIDC(); err != nil {
		return nil, nil, err
	}
	o := &c.OIDC
	iss, _ := issuerURL(o.OIDCIssuer)
	var warns []string
	if iss.Scheme == "http" {
		warns = append(warns, "jwt oidc_issuer uses plain http; use https outside tests")
	}
	allow, _ := push.ParseCIDRs(o.AllowPrivateNetworks...)
	policy := &push.Policy{Allow: allow}
	timeout := time.Duration(o.DiscoveryTimeout)
	if timeout == 0 {
		timeout = DefaultDiscoveryTimeout
	}
	what := "jwt oidc_issuer " + redact(iss)
	if _, err := policy.ParseURL(o.OIDCIssuer); err != nil {
		return nil, nil, fmt.Errorf("%s: the address is not allowed (not public; see allow_private_networks)", what)
	}
	client := policy.HTTPClient(timeout)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	md, err := fetchDiscovery(ctx, client, o.OpenIDConnectURL())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: discovery: %w", what, err)
	}
	if md.Issuer != o.OIDCIssuer {
		// OpenID Connect Discovery §4.3: the document must name the very
		// issuer it was fetched for; another answer is a mix-up.
		return nil, nil, fmt.Errorf("%s: discovery: the document names another issuer (%q); refusing it", what, md.Issuer)
	}
	ju, err := url.Parse(md.JWKSURI)
	if err != nil || !ju.IsAbs() || ju.Host == "" || ju.User != nil || (ju.Scheme != "https" && !(ju.Scheme == "http" && iss.Scheme == "http")) {
		return nil, nil, fmt.Errorf("%s: discovery: jwks_uri must be an absolute https URL", what)
	}
	if _, err := policy.ParseURL(md.JWKSURI); err != nil {
		return nil, nil, fmt.Errorf("%s: discovery: jwks_uri %s is not an allowed address (not public; see allow_private_networks)", what, redact(ju))
	}
	keys := jws.NewRemoteJWKS(md.JWKSURI, jws.FetchOptions{Client: client, Timeout: timeout})
	keys.TTL = time.Duration(o.JWKSCacheTTL)
	keys.MinRefresh = time.Duration(o.JWKSRefreshInterval)
	keys.MaxStale = time.Duration(o.JWKSMaxStale)
	if err := keys.Refresh(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s: keys: %w", what, err)
	}
	return &discovery{issuer: md.Issuer, keys: keys}, warns, nil
}

// fetchDiscovery GETs and parses the discovery document at u (at most
// maxDiscoveryBytes, never following a redirect).
func fetchDiscovery(ctx context.Context, client *http.Client, u string) (*oidcMetadata, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New("invalid request")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, push.ErrBlocked) {
			return nil, errors.New("the address is not allowed (not public; see allow_private_networks)")
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d", resp.StatusCode)
	}
	body, err := limitio.ReadAll(resp.Body, maxDiscoveryBytes)
	if err != nil {
		return nil, fmt.Errorf("reading the document: %w", err)
	}
	var md oidcMetadata
	if err := json.Unmarshal(body, &md); err != nil {
		return nil, errors.New("the document is not a JSON object")
	}
	if md.Issuer == "" || md.JWKSURI == "" {
		return nil, errors.New("the document lacks issuer or jwks_uri")
	}
	return &md, nil
}
