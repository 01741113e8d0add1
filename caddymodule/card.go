package caddymodule

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

func init() {
	caddy.RegisterModule(CardHandler{})
}

// Well-known card paths.
const (
	CardPath       = "/.well-known/agent-card.json"
	LegacyCardPath = "/.well-known/agent.json"
)

// CardHandler serves the public A2A 1.0 Agent Card on
// /.well-known/agent-card.json and the legacy /.well-known/agent.json (GET
// and HEAD), with Content-Type application/a2a+json, Cache-Control, a strong
// ETag of the exact bytes served and a Last-Modified that only moves when the
// card content changes; conditional requests get 304. Other paths go to the
// next handler.
//
// The card is the configured fields (flattened into this object; see
// card.Config) plus runtime fields: supportedInterfaces (JSONRPC then
// HTTP+JSON at the base URL: public_url, else the request's scheme and Host,
// honouring X-Forwarded-Proto/Host only from trusted proxies; never a
// wildcard address), capabilities and security schemes.
type CardHandler struct {
	card.Config

	// MaxAge is the Cache-Control max-age of card responses. Default: 60s.
	MaxAge *caddy.Duration `json:"max_age,omitempty"`

	// Security declares which auth schemes guard the agent, for the card's
	// securitySchemes and securityRequirements. The a2a directive fills it
	// from its auth block; in JSON, keep it in step with the a2a_auth
	// handler. Never holds a credential.
	Security *CardSecurity `json:"security,omitempty"`

	// PushNotifications sets capabilities.pushNotifications. Default: false.
	PushNotifications bool `json:"push_notifications,omitempty"`

	// ThinkingTypes are the enabled thinking-exposure types (e.g.
	// tool_trace, raw_thinking); when non-empty the thinking-exposure
	// extension is advertised with params.enabledTypes.
	ThinkingTypes []string `json:"thinking_types,omitempty"`

	// Sign lists the keys the served card is signed with (CARD-6), one
	// JWS signature per key, so keys can be rotated. The card is signed
	// after every runtime field is filled in, per base URL.
	Sign []CardSignKey `json:"sign,omitempty"`

	// JWKSPath, when set (e.g. /.well-known/jwks.json), serves the public
	// keys of Sign (never HS256 secrets) as a JWKS at this path, for `jku`.
	JWKSPath string `json:"jwks_path,omitempty"`

	signers      []*jws.Signer
	jwks         []byte
	schemes      auth.Schemes
	cacheControl string
	logger       *zap.Logger

	cache             *renderCache
	cacheControlValue []string // shared, read-only header value
}

// renderCache holds rendered cards by base URL.
type renderCache struct {
	mu sync.RWMutex
	m  map[string]*servedCard
}

// CardSignKey is one card signing key.
type CardSignKey struct {
	// Alg is hs256, es256 or eddsa. Required.
	Alg string `json:"alg,omitempty"`
	// KID is the key id written to the protected header. Required.
	KID string `json:"kid,omitempty"`
	// Secret is the HS256 secret (at least 32 bytes). Use an {env.X} or
	// {file.path} placeholder; it is resolved at provision time.
	Secret string `json:"secret,omitempty"`
	// KeyFile is the path of a PEM private key (EC P-256 for es256,
	// Ed25519 for eddsa; PKCS #8 or SEC 1). Placeholders allowed.
	KeyFile string `json:"key_file,omitempty"`
	// JKU, when set, is written to the protected header as the URL of a
	// JWKS holding the public key (e.g. https://host/.well-known/jwks.json).
	JKU string `json:"jku,omitempty"`
}

// CardSecurity lists the auth schemes advertised on the card.
type CardSecurity struct {
	// Bearer advertises bearerAuth (HTTP Bearer).
	Bearer bool `json:"bearer,omitempty"`
	// Basic advertises basicAuth (HTTP Basic).
	Basic bool `json:"basic,omitempty"`
	// APIKey advertises apiKeyAuth (an API key header).
	APIKey bool `json:"api_key,omitempty"`
	// APIKeyHeader names the API key header. Default:
	// $IACCODE_A2A_API_KEY_HEADER when from_env, else X-API-Key.
	APIKeyHeader string `json:"api_key_header,omitempty"`
	// JWT marks bearerAuth as taking JWTs (bearerFormat: JWT).
	JWT bool `json:"jwt,omitempty"`
	// FromEnv also advertises schemes whose IACCODE_A2A_* environment
	// variables are set, exactly as a2a_auth does without no_env.
	FromEnv bool `json:"from_env,omitempty"`
}

// cardContentType is the (shared, read-only) Content-Type header value.
var cardContentType = []string{"application/a2a+json"}

// maxCachedHosts bounds the per-host rendering cache.
const maxCachedHosts = 64

// CaddyModule returns the Caddy module information.
func (CardHandler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.a2a_card",
		New: func() caddy.Module { return new(CardHandler) },
	}
}

// Provision sets defaults and resolves the enabled auth schemes.
func (h *CardHandler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	maxAge := 60 * time.Second
	if h.MaxAge != nil {
		maxAge = time.Duration(*h.MaxAge)
	}
	if maxAge < 0 {
		return errors.New("card max_age: must not be negative")
	}
	h.cacheControl = "public, max-age=" + strconv.FormatInt(int64(maxAge/time.Second), 10)
	h.schemes = h.Security.schemes()
	h.cache = &renderCache{m: map[string]*servedCard{}}
	h.cacheControlValue = []string{h.cacheControl}
	if err := h.provisionSigning(); err != nil {
		return err
	}
	h.warnUnbumpedVersion()
	return nil
}

// provisionSigning loads the signing keys (resolving placeholders) and
// prepares the JWKS document.
func (h *CardHandler) provisionSigning() error {
	repl := caddy.NewReplacer()
	kids := map[string]bool{}
	h.signers = nil
	for i, k := range h.Sign {
		where := fmt.Sprintf("card sign[%d]", i)
		if k.KID == "" {
			return fmt.Errorf("%s: kid is required", where)
		}
		where = fmt.Sprintf("card sign %q", k.KID)
		if kids[k.KID] {
			return fmt.Errorf("%s: duplicate kid", where)
		}
		kids[k.KID] = true
		var s *jws.Signer
		var err error
		switch strings.ToLower(k.Alg) {
		case "hs256":
			if k.KeyFile != "" {
				return fmt.Errorf("%s: hs256 takes a secret, not a key_file", where)
			}
			secret := strings.TrimRight(repl.ReplaceKnown(k.Secret, ""), "\r\n")
			if secret == "" {
				return fmt.Errorf("%s: secret is empty (check its placeholder)", where)
			}
			s, err = jws.NewHMACSigner(k.KID, []byte(secret))
		case "es256", "eddsa":
			if k.Secret != "" {
				return fmt.Errorf("%s: %s takes a key_file, not a secret", where, k.Alg)
			}
			path := repl.ReplaceKnown(k.KeyFile, "")
			if path == "" {
				return fmt.Errorf("%s: key_file is required", where)
			}
			denyStatePaths(path) // INPUT-1a: never readable as input
			pemBytes, rerr := readLimited(path, 64<<10)
			if rerr != nil {
				return fmt.Errorf("%s: reading key_file: %v", where, rerr)
			}
			alg := jws.AlgES256
			if strings.EqualFold(k.Alg, "eddsa") {
				alg = jws.AlgEdDSA
			}
			s, err = jws.ParsePrivateKeyPEM(k.KID, alg, pemBytes)
		default:
			return fmt.Errorf("%s: alg must be hs256, es256 or eddsa", where)
		}
		if err != nil {
			return fmt.Errorf("card sign: %w", err)
		}
		if k.JKU != "" {
			if s, err = s.WithJKU(k.JKU); err != nil {
				return fmt.Errorf("card sign: %w", err)
			}
		}
		h.signers = append(h.signers, s)
	}
	if h.JWKSPath != "" {
		if !strings.HasPrefix(h.JWKSPath, "/") {
			return errors.New("card jwks_path: must start with /")
		}
		b, err := jws.PublicJWKS(h.signers)
		if err != nil {
			return fmt.Errorf("card jwks_path: %w", err)
		}
		h.jwks = b
	}
	return nil
}

// readLimited reads at most max bytes of a file; errors do not name the
// path.
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, errors.New("cannot open the file")
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, errors.New("cannot read the file")
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("file is larger than %d bytes", max)
	}
	return b, nil
}

// previousCards remembers, per card name, the content hash and version of
// the card configuration last provisioned, so a reload that changes the
// card without bumping its version is noticed.
var previousCards = struct {
	sync.Mutex
	m map[string][2]string
}{m: map[string][2]string{}}

// warnUnbumpedVersion logs a warning when the card's content changed
// since the previous configuration but its version did not (the seed's
// rule: bump version whenever the card changes).
func (h *CardHandler) warnUnbumpedVersion() {
	cfg := h.Config
	version := cfg.Version
	if version == "" {
		version = card.DefaultVersion // what the card advertises
	}
	cfg.Version = ""
	b, err := json.Marshal(struct {
		C card.Config
		S *CardSecurity
		P bool
		T []string
	}{cfg, h.Security, h.PushNotifications, h.ThinkingTypes})
	if err != nil {
		return
	}
	sum := sha256.Sum256(b)
	hash := hex.EncodeToString(sum[:])
	previousCards.Lock()
	defer previousCards.Unlock()
	prev, seen := previousCards.m[h.Name]
	if len(previousCards.m) > 256 {
		clear(previousCards.m)
	}
	previousCards.m[h.Name] = [2]string{hash, version}
	if seen && prev[0] != hash && prev[1] == version {
		h.logger.Warn("agent card content changed but its version did not; bump card version so clients notice",
			zap.String("card", h.Name), zap.String("version", version))
	}
}

// SignCard signs c with every configured key (no-op without keys). c must
// be complete: every runtime field filled in.
func (h *CardHandler) SignCard(c *a2a.AgentCard) error {
	return jws.SignCard(c, h.signers...)
}

// schemes turns the declaration into auth.Schemes, applying env defaults.
func (s *CardSecurity) schemes() auth.Schemes {
	if s == nil {
		return auth.Schemes{APIKeyHeader: auth.DefaultAPIKeyHeader}
	}
	var getenv func(string) string
	if s.FromEnv {
		getenv = os.Getenv
	}
	env := auth.Config{APIKeyHeader: s.APIKeyHeader, NoEnv: !s.FromEnv}.Schemes(getenv)
	env.Bearer = env.Bearer || s.Bearer
	env.Basic = env.Basic || s.Basic
	env.APIKey = env.APIKey || s.APIKey
	env.JWT = s.JWT
	env.Bearer = env.Bearer || s.JWT
	return env
}

// Validate checks the card configuration.
func (h *CardHandler) Validate() error {
	return h.Config.Validate()
}

// Runtime returns the runtime facts for a card served to r (base URL from
// public_url or the request, auth schemes, push and thinking settings).
func (h *CardHandler) Runtime(r *http.Request) card.Runtime {
	base := h.PublicURL
	if base == "" && r != nil {
		trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
		base = card.BaseURL(r, trusted)
	}
	return card.Runtime{
		BaseURL:           base,
		Bearer:            h.schemes.Bearer,
		Basic:             h.schemes.Basic,
		APIKey:            h.schemes.APIKey,
		APIKeyHeader:      h.schemes.APIKeyHeader,
		BearerJWT:         h.schemes.JWT,
		PushNotifications: h.PushNotifications,
		ThinkingTypes:     h.ThinkingTypes,
	}
}

// Card builds the public card as served to r.
func (h *CardHandler) Card(r *http.Request) *a2a.AgentCard {
	return card.Build(&h.Config, h.Runtime(r))
}

func (h *CardHandler) rendered(r *http.Request) (*servedCard, error) {
	key := h.cacheKey(r)
	rc := h.cache
	rc.mu.RLock()
	c, ok := rc.m[key]
	rc.mu.RUnlock()
	if ok {
		return c, nil
	}
	rt := h.Runtime(r)
	built := card.Build(&h.Config, rt)
	if err := h.SignCard(built); err != nil {
		return nil, err
	}
	rend, err := card.Render(built)
	if err != nil {
		return nil, err
	}
	// Last-Modified follows the card's content, not the host it is served
	// for: the first-seen time of the card rendered for a fixed base URL.
	// Hosts a client makes up neither move it nor add entries to the store.
	canon := rt
	canon.BaseURL = "https://agent.invalid/"
	ch, err := card.Render(card.Build(&h.Config, canon))
	if err != nil {
		return nil, err
	}
	c = &servedCard{Rendered: rend, modified: cardModTimes.FirstSeen(ch.Hash)}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.m) >= maxCachedHosts {
		clear(rc.m)
	}
	rc.m[key] = c
	return c, nil
}

// servedCard is a rendered card with its Last-Modified time.
type servedCard struct {
	*card.Rendered
	modified time.Time
}

// cacheKey identifies what the card served to r depends on (its base URL)
// without building the URL: the raw host, TLS, and the forwarded headers
// of trusted proxies.
func (h *CardHandler) cacheKey(r *http.Request) string {
	if h.PublicURL != "" {
		return ""
	}
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	if !trusted {
		if r.TLS != nil {
			return "s|" + r.Host
		}
		return r.Host
	}
	return "t|" + strconv.FormatBool(r.TLS != nil) + "|" + r.Host + "|" + r.Header.Get("X-Forwarded-Proto") + "|" + r.Header.Get("X-Forwarded-Host")
}

// etagMatches applies If-None-Match (RFC 9110 §13.1.2: a list of entity
// tags or "*", weak comparison) to etag.
func etagMatches(header, etag string) bool {
	for _, tag := range strings.Split(header, ",") {
		tag = strings.TrimSpace(tag)
		if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
			return true
		}
	}
	return false
}

func (h *CardHandler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if h.jwks != nil && r.URL.Path == h.JWKSPath && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		hdr := w.Header()
		hdr.Set("Content-Type", "application/jwk-set+json")
		hdr.Set("Cache-Control", h.cacheControl)
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(h.jwks))
		return nil
	}
	if r.URL.Path != CardPath && r.URL.Path != LegacyCardPath {
		return next.ServeHTTP(w, r)
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		return caddyhttp.Error(http.StatusMethodNotAllowed, errors.New("agent card: method not allowed"))
	}
	c, err := h.rendered(r)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, fmt.Errorf("rendering agent card: %w", err))
	}
	hdr := w.Header()
	hdr["Cache-Control"] = h.cacheControlValue
	hdr["Etag"] = []string{c.ETag}
	if inm := r.Header.Get("If-None-Match"); inm != "" && etagMatches(inm, c.ETag) {
		// The common revalidation, answered without http.ServeContent and
		// with the headers RFC 9110 §15.4.5 asks of a 304 (as ServeContent).
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	hdr["Content-Type"] = cardContentType
	http.ServeContent(w, r, "", c.modified, bytes.NewReader(c.Body))
	return nil
}

// cardModTimes remembers, process-wide and across reloads, when each card
// rendering (by content hash) was first served; it is persisted under
// Caddy's data directory so restarts keep Last-Modified too. Keys are content
// hashes, so sites and config generations cannot disturb each other.
var cardModTimes = card.NewModTimes(1024, loadModTimes, saveModTimes)

var modTimesMu sync.Mutex

func modTimesFile() string {
	return filepath.Join(caddy.AppDataDir(), "a2a", "card_modtimes.json")
}

func loadModTimes() map[string]time.Time {
	b, err := os.ReadFile(modTimesFile())
	if err != nil {
		return nil
	}
	var m map[string]time.Time
	if json.Unmarshal(b, &m) != nil {
		return nil
	}
	return m
}

func saveModTimes(m map[string]time.Time) {
	modTimesMu.Lock()
	defer modTimesMu.Unlock()
	path := modTimesFile()
	b, err := json.Marshal(m)
	if err != nil {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return
	}
	_ = os.Rename(tmp, path)
}

var (
	_ caddy.Provisioner           = (*CardHandler)(nil)
	_ caddy.Validator             = (*CardHandler)(nil)
	_ caddyhttp.MiddlewareHandler = (*CardHandler)(nil)
)
