package card

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

// Rendered is one serialised card with its validators.
type Rendered struct {
	// Body is the exact bytes served.
	Body []byte
	// ETag is a strong entity tag (quoted) derived from Body.
	ETag string
	// Hash is the hex SHA-256 of Body.
	Hash string
}

// Render serialises c and computes its strong ETag.
func Render(c *a2a.AgentCard) (*Rendered, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	body := bytes.TrimRight(buf.Bytes(), "\n")
	sum := sha256.Sum256(body)
	h := hex.EncodeToString(sum[:])
	return &Rendered{Body: body, ETag: etagOfHash(h), Hash: h}, nil
}

// BaseURL computes the externally visible base URL ("scheme://host/") of a
// request. X-Forwarded-Proto and X-Forwarded-Host are honoured only when
// trusted is true (the request came from a trusted proxy). A wildcard or
// invalid host is replaced by 127.0.0.1 (keeping the port).
func BaseURL(r *http.Request, trusted bool) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host := r.Host
	if trusted {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" {
			host = h
		}
	}
	return scheme + "://" + SafeHost(host) + "/"
}

func firstValue(v string) string {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

// SafeHost returns host[:port] if it is a syntactically valid host with an
// optional port and not a wildcard address; otherwise 127.0.0.1 with the
// original port when one can be recovered.
func SafeHost(hostport string) string {
	hostport = strings.ToLower(strings.TrimSpace(hostport))
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, ""
	}
	if port != "" && !allDigits(port) {
		return "127.0.0.1"
	}
	fallback := "127.0.0.1"
	if port != "" {
		fallback += ":" + port
	}
	if IsWildcardHost(host) || !validHost(host) {
		return fallback
	}
	if strings.Contains(host, ":") { // IPv6 literal
		host = "[" + strings.Trim(host, "[]") + "]"
	}
	if port != "" {
		return host + ":" + port
	}
	return host
}

func allDigits(s string) bool {
	if len(s) == 0 || len(s) > 5 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func validHost(h string) bool {
	h = strings.Trim(h, "[]")
	if h == "" || len(h) > 253 {
		return false
	}
	if ip := net.ParseIP(h); ip != nil {
		return true
	}
	for _, c := range h {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '.', c == '_':
		default:
			return false
		}
	}
	return true
}

// WellKnownPath is where the public Agent Card is served (CARD-2); the
// card fetchers (internal/cardfetch) build discovery URLs with it.
const WellKnownPath = cardfetch.WellKnownPath
