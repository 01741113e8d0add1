package client

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/jws"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

// DefaultKeyFetchTimeout bounds each JWKS download of a Trust without a
// Timeout.
const DefaultKeyFetchTimeout = 15 * time.Second

// HS256Secret is a shared HS256 key trusted under a kid.
type HS256Secret struct {
	// KID is the key id the card's protected header names.
	KID string
	// Secret is the shared secret (at least jws.MinHMACSecret bytes).
	Secret []byte
}

// Trust names the keys an Agent Card's signature must verify with (CLI-1
// "verifies its signature when keys are given", CARD-7). Keys are looked up
// by the kid of each protected header: first the local ones (HS256,
// KeyFiles, JWKSFiles), then JWKSURLs, then, only when its origin is in
// AllowJKU, the jku of the card's own header. The zero value names no keys.
type Trust struct {
	// HS256 are shared secrets.
	HS256 []HS256Secret
	// KeyFiles are "[KID=]FILE": a PEM public key (PKIX "PUBLIC KEY";
	// without KID it is trusted for every kid the card names) or a JWKS
	// file.
	KeyFiles []string
	// JWKSFiles are local JWKS files of trusted keys.
	JWKSFiles []string
	// JWKSURLs are remote JWKS URLs of trusted keys (http or https).
	JWKSURLs []string
	// AllowJKU lists origins (scheme://host[:port]) whose jku URLs may be
	// fetched; a jku outside it is never fetched.
	AllowJKU []string
	// Timeout bounds each key download (0: DefaultKeyFetchTimeout).
	Timeout time.Duration
}

// Empty reports whether t names no keys at all.
func (t Trust) Empty() bool {
	return len(t.HS256)+len(t.KeyFiles)+len(t.JWKSFiles)+len(t.JWKSURLs)+len(t.AllowJKU) == 0
}

// Verifier builds the verifier for the card JSON raw (whose signatures'
// kids a kid-less PEM key is trusted for). Bad key material is a usage
// error naming the flag it came from.
func (t Trust) Verifier(raw []byte) (*jws.Verifier, error) {
	timeout := t.Timeout
	if timeout <= 0 {
		timeout = DefaultKeyFetchTimeout
	}
	v := &jws.Verifier{Keys: &jws.KeySet{}, Fetch: jws.FetchOptions{Timeout: timeout}}
	for _, s := range t.HS256 {
		if err := v.Keys.AddSecret(s.KID, s.Secret); err != nil {
			return nil, usagef("--hs256-env: %v", err)
		}
	}
	for _, spec := range t.KeyFiles {
		if err := addKeyFile(v.Keys, spec, signatureKIDs(raw)); err != nil {
			return nil, err
		}
	}
	for _, p := range t.JWKSFiles {
		ks, err := readJWKSFile(p)
		if err != nil {
			return nil, usagef("--jwks-file %s: %v", p, err)
		}
		v.Keys.Add(ks.All()...)
	}
	for _, u := range t.JWKSURLs {
		if _, err := jws.Origin(u); err != nil {
			return nil, usagef("--jwks-url %q: %v", cardfetch.RedactURL(u), err)
		}
		v.Remote = append(v.Remote, jws.NewRemoteJWKS(u, jws.FetchOptions{Timeout: timeout}))
	}
	for _, o := range t.AllowJKU {
		if _, err := jws.Origin(o); err != nil {
			return nil, usagef("--allow-jku %q: %v", cardfetch.RedactURL(o), err)
		}
		v.AllowedJKUOrigins = append(v.AllowedJKUOrigins, o)
	}
	return v, nil
}

// addKeyFile adds the key(s) of one "[KID=]FILE" spec: a PEM public key
// trusted under KID (or under each of kids), or a JWKS file.
func addKeyFile(ks *jws.KeySet, spec string, kids []string) error {
	kid, path, ok := strings.Cut(spec, "=")
	if !ok {
		kid, path = "", spec
	}
	b, err := ReadFileLimited(path, jws.MaxJWKSBytes)
	if err != nil {
		return usagef("--verify-key %s: %v", path, err)
	}
	if blk, _ := pem.Decode(b); blk != nil {
		pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
		if err != nil {
			return usagef("--verify-key %s: not a PEM public key (PKIX): %v", path, err)
		}
		if kid != "" {
			kids = []string{kid}
		}
		for _, id := range kids {
			ks.Add(jws.Key{KID: id, Public: pub})
		}
		return nil
	}
	set, err := jws.ParseJWKS(b)
	if err != nil {
		return usagef("--verify-key %s: neither a PEM public key nor a JWKS: %v", path, err)
	}
	ks.Add(set.All()...)
	return nil
}

// readJWKSFile reads and parses a local JWKS file.
func readJWKSFile(path string) (*jws.KeySet, error) {
	b, err := ReadFileLimited(path, jws.MaxJWKSBytes)
	if err != nil {
		return nil, err
	}
	return jws.ParseJWKS(b)
}

// signatureKIDs returns the kids of the card's signature headers.
func signatureKIDs(raw []byte) []string {
	var c struct {
		Signatures []struct {
			Protected string `json:"protected"`
		} `json:"signatures"`
	}
	if json.Unmarshal(raw, &c) != nil {
		return nil
	}
	var kids []string
	for _, s := range c.Signatures {
		if h, err := jws.ParseHeader(s.Protected); err == nil && h.Kid != "" {
			kids = append(kids, h.Kid)
		}
	}
	return kids
}

// VerifyCard checks the JWS signatures of the card JSON raw: at least one
// must verify with the keys t names. A failed check is a protocol error
// (exit 3, CLI-2), bad key material a usage error.
func VerifyCard(ctx context.Context, raw []byte, t Trust) error {
	v, err := t.Verifier(raw)
	if err != nil {
		return err
	}
	if _, err := v.VerifyCard(ctx, raw); err != nil {
		if errors.Is(err, jws.ErrNoSignatures) {
			return protocolf("agent card signature check failed: the card is not signed")
		}
		return protocolf("agent card signature check failed: %v", err)
	}
	return nil
}

// ReadFileLimited reads a local file of at most limit bytes (it stops
// reading after limit+1); its errors do not name the path.
func ReadFileLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathErr(err)
	}
	defer f.Close()
	b, err := readLimited(f, limit)
	if err != nil {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}
