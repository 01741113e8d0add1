package jws

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
)

// MaxJWKSBytes bounds a JWKS document (file or HTTP body).
const MaxJWKSBytes = 1 << 20

// MaxJWKSKeys bounds the number of keys taken from one JWKS.
const MaxJWKSKeys = 100

// JWK is a JSON Web Key (RFC 7517) of type oct, EC, OKP or RSA.
type JWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid,omitempty"`
	Alg string `json:"alg,omitempty"`
	Use string `json:"use,omitempty"`
	Crv string `json:"crv,omitempty"`
	X   string `json:"x,omitempty"`
	Y   string `json:"y,omitempty"`
	N   string `json:"n,omitempty"`
	E   string `json:"e,omitempty"`
	K   string `json:"k,omitempty"`
	D   string `json:"d,omitempty"`
}

// JWKSet is a JWKS document.
type JWKSet struct {
	Keys []JWK `json:"keys"`
}

// Key is a verification key: a shared secret (HS256) or a public key.
type Key struct {
	// KID is the key id.
	KID string
	// Alg, when not empty, is the only algorithm the key may verify.
	Alg string
	// Secret is the HS256 secret (kty oct); nil for public keys.
	Secret []byte
	// Public is *ecdsa.PublicKey, ed25519.PublicKey or *rsa.PublicKey.
	Public any
}

// Fits reports whether alg may be used with k: the algorithm family
// must match the key type (so HS256 never runs over a public key) and the
// key's own alg, if any, must be alg.
func (k Key) Fits(alg string) bool {
	if k.Alg != "" && k.Alg != alg {
		return false
	}
	switch alg {
	case AlgHS256:
		return k.Secret != nil && k.Public == nil
	case AlgES256:
		p, ok := k.Public.(*ecdsa.PublicKey)
		return ok && p.Curve == elliptic.P256()
	case AlgEdDSA:
		_, ok := k.Public.(ed25519.PublicKey)
		return ok
	case AlgRS256:
		p, ok := k.Public.(*rsa.PublicKey)
		return ok && p.N.BitLen() >= 2048
	}
	return false
}

// KeySet is a set of verification keys, looked up by kid. The zero value
// is empty and ready to use; it is safe for concurrent reads.
type KeySet struct {
	keys []Key
}

// Add adds keys to the set.
func (ks *KeySet) Add(keys ...Key) { ks.keys = append(ks.keys, keys...) }

// AddSecret adds an HS256 secret under kid.
func (ks *KeySet) AddSecret(kid string, secret []byte) error {
	if err := checkKID(kid); err != nil {
		return err
	}
	if len(secret) < MinHMACSecret {
		return fmt.Errorf("hs256 key %q: secret must be at least %d bytes", kid, MinHMACSecret)
	}
	ks.keys = append(ks.keys, Key{KID: kid, Alg: AlgHS256, Secret: append([]byte(nil), secret...)})
	return nil
}

// Lookup returns the keys with the given kid.
func (ks *KeySet) Lookup(kid string) []Key {
	if ks == nil {
		return nil
	}
	var out []Key
	for _, k := range ks.keys {
		if k.KID == kid {
			out = append(out, k)
		}
	}
	return out
}

// All returns every key of the set.
func (ks *KeySet) All() []Key {
	if ks == nil {
		return nil
	}
	return append([]Key(nil), ks.keys...)
}

// Len returns the number of keys.
func (ks *KeySet) Len() int {
	if ks == nil {
		return 0
	}
	return len(ks.keys)
}

// ParseJWKS parses a JWKS document. Keys of unknown type, keys for
// encryption (use "enc") and private members are ignored; a malformed key
// of a known type is an error.
func ParseJWKS(data []byte) (*KeySet, error) {
	if len(data) > MaxJWKSBytes {
		return nil, fmt.Errorf("jwks: larger than %d bytes", MaxJWKSBytes)
	}
	var set JWKSet
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, errors.New("jwks: not a JSON object with a keys array")
	}
	if len(set.Keys) > MaxJWKSKeys {
		return nil, fmt.Errorf("jwks: more than %d keys", MaxJWKSKeys)
	}
	ks := &KeySet{}
	for i, j := range set.Keys {
		if j.Use == "enc" {
			continue
		}
		k, ok, err := j.Key()
		if err != nil {
			return nil, fmt.Errorf("jwks: keys[%d]: %w", i, err)
		}
		if ok {
			ks.keys = append(ks.keys, k)
		}
	}
	return ks, nil
}

// Key converts a JWK into a verification Key; ok is false for key types
// this package does not use.
func (j JWK) Key() (Key, bool, error) {
	k := Key{KID: j.Kid, Alg: j.Alg}
	switch j.Kty {
	case "oct":
		s, err := b64.DecodeString(j.K)
		if err != nil || len(s) == 0 {
			return Key{}, false, errors.New("oct key: invalid k")
		}
		if k.Alg == "" {
			k.Alg = AlgHS256
		}
		k.Secret = s
	case "EC":
		var curve elliptic.Curve
		size := 32
		switch j.Crv {
		case "P-256":
			curve = elliptic.P256()
		case "P-384":
			curve, size = elliptic.P384(), 48
		case "P-521":
			curve, size = elliptic.P521(), 66
		default:
			return Key{}, false, fmt.Errorf("EC key: unsupported curve %q", j.Crv)
		}
		x, errX := b64.DecodeString(j.X)
		y, errY := b64.DecodeString(j.Y)
		if errX != nil || errY != nil || len(x) != size || len(y) != size {
			return Key{}, false, errors.New("EC key: invalid x or y")
		}
		raw := append(append([]byte{4}, x...), y...)
		pub, err := ecdsa.ParseUncompressedPublicKey(curve, raw)
		if err != nil {
			return Key{}, false, errors.New("EC key: point is not on the curve")
		}
		k.Public = pub
	case "OKP":
		if j.Crv != "Ed25519" {
			return Key{}, false, fmt.Errorf("OKP key: unsupported curve %q", j.Crv)
		}
		x, err := b64.DecodeString(j.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return Key{}, false, errors.New("OKP key: invalid x")
		}
		k.Public = ed25519.PublicKey(x)
	case "RSA":
		n, errN := bigInt(j.N)
		e, errE := bigInt(j.E)
		if errN != nil || errE != nil || !e.IsInt64() || e.Int64() < 3 || e.Int64() > 1<<31-1 {
			return Key{}, false, errors.New("RSA key: invalid n or e")
		}
		if n.BitLen() < 2048 || n.BitLen() > 8192 {
			return Key{}, false, errors.New("RSA key: modulus must be 2048 to 8192 bits")
		}
		k.Public = &rsa.PublicKey{N: n, E: int(e.Int64())}
	default:
		return Key{}, false, nil
	}
	return k, true, nil
}

// FetchOptions bound remote JWKS fetches.
type FetchOptions struct {
	// Client is the HTTP client. Default: a client with Timeout.
	Client *http.Client
	// Timeout bounds one fetch. Default: 10s.
	Timeout time.Duration
	// MaxBytes bounds the body. Default: MaxJWKSBytes.
	MaxBytes int64
}

func (o FetchOptions) client() *http.Client {
	if o.Client != nil {
		return o.Client
	}
	t := o.Timeout
	if t <= 0 {
		t = 10 * time.Second
	}
	// No redirects: a JWKS is taken only from the allow-listed origin asked.
	return &http.Client{Timeout: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// FetchJWKS downloads and parses a JWKS from u (http or https).
func FetchJWKS(ctx context.Context, u string, opts FetchOptions) (*KeySet, error) {
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
		return nil, errors.New("jwks url: must be an absolute http(s) URL")
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, errors.New("jwks url: invalid request")
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := opts.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching jwks from %s: %w", redactURL(pu), unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching jwks from %s: status %d", redactURL(pu), resp.StatusCode)
	}
	max := opts.MaxBytes
	if max <= 0 {
		max = MaxJWKSBytes
	}
	body, err := limitio.ReadAll(resp.Body, max)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("jwks from %s: %w", redactURL(pu), err)
	}
	if err != nil {
		return nil, fmt.Errorf("reading jwks from %s: %w", redactURL(pu), err)
	}
	return ParseJWKS(body)
}

// redactURL returns scheme://host/path without user info or query.
func redactURL(u *url.URL) string {
	return u.Scheme + "://" + u.Host + u.EscapedPath()
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
