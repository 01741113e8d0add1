// Package idp runs a real OpenID provider for the tests (issue 30,
// AUTH-7): zitadel/oidc's op package (the provider library ZITADEL is
// built on) over its example in-memory storage, on a loopback port. It
// serves discovery (/.well-known/openid-configuration), the JWKS (/keys)
// and the OAuth 2.0 token endpoint (/oauth/token) with the client
// credentials grant, issuing RS256 JWT access tokens. Tests can rotate its
// signing key and take it down while a gateway uses it.
package idp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"golang.org/x/oauth2/clientcredentials"
)

// Client is a service client registered at the provider (client
// credentials grant). Its tokens have `sub` and `client_id` set to ID and
// `aud` set to Audience.
type Client struct {
	// ID is the client id, also the tokens' subject.
	ID string
	// Secret is the client secret.
	Secret string
	// Audience is the tokens' aud (default: the client id).
	Audience []string
}

// Provider is a running OpenID provider.
type Provider struct {
	// Issuer is the provider's issuer URL (http://127.0.0.1:PORT).
	Issuer string
	// TokenURL is the token endpoint.
	TokenURL string

	srv   *http.Server
	store *store
	down  atomic.Bool
	hits  sync.Map // path -> *atomic.Int64
}

// Start runs a provider with clients on a free loopback port until the
// test ends.
func Start(t testing.TB, clients ...Client) *Provider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	st := newStore(t, issuer, clients)
	var key [32]byte
	if _, err := rand.Read(key[:]); err != nil {
		t.Fatal(err)
	}
	prov, err := op.NewProvider(&op.Config{CryptoKey: key}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	p := &Provider{Issuer: issuer, TokenURL: issuer + "/oauth/token", store: st}
	h := prov.HttpHandler()
	p.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.count(r.URL.Path)
		if p.down.Load() {
			http.Error(w, "identity provider down", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	t.Cleanup(func() { _ = p.srv.Close() })
	return p
}

func (p *Provider) count(path string) {
	v, _ := p.hits.LoadOrStore(path, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// Hits is how many requests path got (e.g. "/keys").
func (p *Provider) Hits(path string) int64 {
	v, ok := p.hits.Load(path)
	if !ok {
		return 0
	}
	return v.(*atomic.Int64).Load()
}

// SetDown makes every endpoint answer 503 (an outage) or serve again.
func (p *Provider) SetDown(down bool) { p.down.Store(down) }

// Rotate makes a new signing key current; the JWKS then publishes the
// new key only when dropOld, else both. It returns the new key id.
func (p *Provider) Rotate(t testing.TB, dropOld bool) string {
	t.Helper()
	return p.store.rotate(t, dropOld)
}

// KeyID is the current signing key's id.
func (p *Provider) KeyID() string { return p.store.current().id }

// PublicKey is the current signing key's public key (for attack tests).
func (p *Provider) PublicKey() *rsa.PublicKey { return &p.store.current().key.PublicKey }

// Token fetches an access token for the client with the client
// credentials grant, as any OAuth 2.0 client would.
func (p *Provider) Token(t testing.TB, id, secret string, scopes ...string) string {
	t.Helper()
	cc := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: p.TokenURL, Scopes: scopes}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tok, err := cc.Token(ctx)
	if err != nil {
		t.Fatalf("idp token for %s: %v", id, err)
	}
	return tok.AccessToken
}

// key is one signing key.
type key struct {
	id  string
	key *rsa.PrivateKey
}

func (k *key) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *key) Key() any                                    { return k.key }
func (k *key) ID() string                                  { return k.id }

// pub is the published form of a key.
type pub struct{ k *key }

func (p pub) ID() string                         { return p.k.id }
func (p pub) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (p pub) Use() string                        { return "sig" }
func (p pub) Key() any                           { return &p.k.key.PublicKey }

// store is the example storage of zitadel/oidc with our signing keys
// (rotatable) and our service clients (JWT access tokens, per-client
// audience, a scope claim).
type store struct {
	*storage.Storage
	mu        sync.Mutex
	keys      []*key // current last
	published []*key
	clients   map[string]*client
	gen       int
}

func newStore(t testing.TB, issuer string, clients []Client) *store {
	s := &store{Storage: storage.NewStorage(storage.NewUserStore(issuer)), clients: map[string]*client{}}
	for _, c := range clients {
		aud := c.Audience
		if len(aud) == 0 {
			aud = []string{c.ID}
		}
		s.clients[c.ID] = &client{id: c.ID, secret: c.Secret, audience: aud}
	}
	s.rotate(t, true)
	return s
}

func (s *store) rotate(t testing.TB, dropOld bool) string {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	nk := &key{id: "key-" + strconv.Itoa(s.gen), key: k}
	s.keys = append(s.keys, nk)
	if dropOld {
		s.published = nil
	}
	s.published = append(s.published, nk)
	return nk.id
}

func (s *store) current() *key {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1]
}

// SigningKey implements op.Storage: the current key.
func (s *store) SigningKey(context.Context) (op.SigningKey, error) { return s.current(), nil }

// SignatureAlgorithms implements op.Storage.
func (s *store) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.Storage: the published keys.
func (s *store) KeySet(context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.published))
	for _, k := range s.published {
		out = append(out, pub{k})
	}
	return out, nil
}

// ClientCredentials implements op.ClientCredentialsStorage.
func (s *store) ClientCredentials(_ context.Context, id, secret string) (op.Client, error) {
	c, ok := s.clients[id]
	if !ok || c.secret != secret {
		return nil, oidc.ErrInvalidClient().WithDescription("wrong client id or secret")
	}
	return c, nil
}

// ClientCredentialsTokenRequest implements op.ClientCredentialsStorage.
func (s *store) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	c, ok := s.clients[id]
	if !ok {
		return nil, oidc.ErrInvalidClient()
	}
	return &oidc.JWTTokenRequest{Subject: c.id, Audience: c.audience, Scopes: scopes}, nil
}

// GetClientByClientID implements op.Storage for the service clients too.
func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	if c, ok := s.clients[id]; ok {
		return c, nil
	}
	return s.Storage.GetClientByClientID(ctx, id)
}

// GetPrivateClaimsFromScopes implements op.Storage: service tokens carry
// their granted scopes as the `scope` claim (RFC 9068).
func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	if _, ok := s.clients[clientID]; ok {
		if len(scopes) == 0 {
			return nil, nil
		}
		return map[string]any{"scope": strings.Join(scopes, " ")}, nil
	}
	return s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
}

// client is a service client issuing JWT access tokens.
type client struct {
	id, secret string
	audience   []string
}

func (c *client) GetID() string                       { return c.id }
func (c *client) RedirectURIs() []string              { return nil }
func (c *client) PostLogoutRedirectURIs() []string    { return nil }
func (c *client) ApplicationType() op.ApplicationType { return op.ApplicationTypeWeb }
func (c *client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodBasic }
func (c *client) ResponseTypes() []oidc.ResponseType  { return nil }
func (c *client) GrantTypes() []oidc.GrantType {
	return []oidc.GrantType{oidc.GrantTypeClientCredentials}
}
func (c *client) LoginURL(string) string               { return "" }
func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenLifetime() time.Duration       { return 5 * time.Minute }
func (c *client) DevMode() bool                        { return true }
func (c *client) IsScopeAllowed(string) bool           { return true }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *client) ClockSkew() time.Duration             { return 0 }
func (c *client) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
func (c *client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}
