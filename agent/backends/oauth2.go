package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	"github.com/caddy-a2a/caddy-a2a/agent/backend"
	"github.com/caddy-a2a/caddy-a2a/push"
)

// DefaultOAuth2Timeout bounds one token request.
const DefaultOAuth2Timeout = 10 * time.Second

// OAuth2 is the OAuth 2.0 client credentials grant a backend uses to get
// the bearer token it sends upstream (issue 30: OAuth to upstreams). The
// token is fetched on the first upstream request, cached until shortly
// before it expires, then fetched again; it and the client secret are
// never logged nor shown in an error.
type OAuth2 struct {
	// TokenURL is the identity provider's token endpoint. Required. It is
	// reached through the SSRF guard: only public addresses, or those in
	// AllowPrivateNetworks.
	TokenURL string `json:"token_url,omitempty"`
	// ClientID is the gateway's client id at the provider. Required.
	ClientID string `json:"client_id,omitempty"`
	// ClientSecret is the client secret. Required. Use a placeholder
	// ({env.X}, {file.path}), resolved at provision time.
	ClientSecret string `json:"client_secret,omitempty"`
	// Scopes are the scopes asked for.
	Scopes []string `json:"scopes,omitempty"`
	// Audience, when set, is sent as the `audience` parameter (Auth0,
	// Okta and Keycloak's audience mappers read it).
	Audience string `json:"audience,omitempty"`
	// AllowPrivateNetworks lists CIDRs (or IPs) the token endpoint may be
	// on although they are not public addresses (an intranet identity
	// provider). Default: none.
	AllowPrivateNetworks []string `json:"allow_private_networks,omitempty"`
}

// Validate checks o (nil: no OAuth).
func (o *OAuth2) Validate() error {
	if o == nil {
		return nil
	}
	u, err := url.Parse(o.TokenURL)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") || u.User != nil {
		return errors.New("oauth2 token_url: must be an absolute http(s) URL without user information")
	}
	if o.ClientID == "" || o.ClientSecret == "" {
		return errors.New("oauth2: client_id and client_secret are required")
	}
	for _, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return fmt.Errorf("oauth2 scopes: %q is not a scope token", s)
		}
	}
	if _, err := push.ParseCIDRs(o.AllowPrivateNetworks...); err != nil {
		return fmt.Errorf("oauth2 allow_private_networks: %w", err)
	}
	return nil
}

// Transport returns a RoundTripper that sends every request through base
// with "Authorization: Bearer <token>", the token from o's provider
// (cached until it expires). resolve resolves placeholders in the client
// secret (nil: none).
func (o *OAuth2) Transport(base http.RoundTripper, resolve func(string) string) (http.RoundTripper, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	secret := o.ClientSecret
	if resolve != nil {
		secret = strings.TrimRight(resolve(secret), "\r\n")
	}
	if secret == "" {
		return nil, errors.New("oauth2 client_secret: resolved to an empty value (check its placeholder)")
	}
	allow, _ := push.ParseCIDRs(o.AllowPrivateNetworks...)
	policy := &push.Policy{Allow: allow}
	if _, err := policy.ParseURL(o.TokenURL); err != nil {
		return nil, fmt.Errorf("oauth2 token_url %s: the address is not allowed (not public; see allow_private_networks)", redactedURL(o.TokenURL))
	}
	cc := &clientcredentials.Config{ClientID: o.ClientID, ClientSecret: secret, TokenURL: o.TokenURL, Scopes: o.Scopes}
	if o.Audience != "" {
		cc.EndpointParams = url.Values{"audience": {o.Audience}}
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, policy.HTTPClient(DefaultOAuth2Timeout))
	src := &quietSource{src: cc.TokenSource(ctx), tokenURL: redactedURL(o.TokenURL)}
	return &oauth2.Transport{Source: oauth2.ReuseTokenSource(nil, src), Base: base}, nil
}

// quietSource turns a token error into a turn error (TURN-8) that shows
// the token URL and the provider's status or error code only: never the
// response body, the client secret or a token. A refusal by the provider
// (a wrong client secret, an unknown scope) is an auth failure; a provider
// that cannot be reached is a transient one.
type quietSource struct {
	src      oauth2.TokenSource
	tokenURL string
}

// Token implements oauth2.TokenSource.
func (q *quietSource) Token() (*oauth2.Token, error) {
	t, err := q.src.Token()
	if err == nil {
		return t, nil
	}
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode != "":
		return nil, &backend.TurnError{Kind: backend.ErrorKindAuth, Err: fmt.Errorf("upstream oauth2: the token endpoint %s refused: %s", q.tokenURL, re.ErrorCode)}
	case errors.As(err, &re) && re.Response != nil && re.Response.StatusCode < 500:
		return nil, &backend.TurnError{Kind: backend.ErrorKindAuth, Err: fmt.Errorf("upstream oauth2: the token endpoint %s answered status %d", q.tokenURL, re.Response.StatusCode)}
	case errors.As(err, &re) && re.Response != nil:
		return nil, &backend.TurnError{Kind: backend.ErrorKindTransient, Err: fmt.Errorf("upstream oauth2: the token endpoint %s answered status %d", q.tokenURL, re.Response.StatusCode)}
	case errors.Is(err, push.ErrBlocked):
		return nil, &backend.TurnError{Kind: backend.ErrorKindInternal, Err: fmt.Errorf("upstream oauth2: the token endpoint %s is not an allowed address", q.tokenURL)}
	default:
		return nil, &backend.TurnError{Kind: backend.ErrorKindTransient, Err: fmt.Errorf("upstream oauth2: cannot reach the token endpoint %s", q.tokenURL)}
	}
}

// redactedURL is scheme://host/path of raw.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(invalid URL)"
	}
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}
