package client

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

// VerifyCard checks the card's JWS signatures (CLI-1 "verifies its signature
// when keys are given"); at least one must verify with the given keys.
//
// keyFiles are "[KID=]FILE": a PEM public key (PKIX "PUBLIC KEY"; without
// KID it is trusted for every kid the card names) or a JWKS file. jwks is
// a JWKS URL (http/https) or file.
func VerifyCard(ctx context.Context, raw []byte, card *a2a.AgentCard, keyFiles []string, jwks string, opts Options) error {
	v := &jws.Verifier{Keys: &jws.KeySet{}, Fetch: jws.FetchOptions{Timeout: 15 * time.Second}}
	var kids []string
	for _, s := range card.Signatures {
		if h, err := jws.ParseHeader(s.Protected); err == nil && h.Kid != "" {
			kids = append(kids, h.Kid)
		}
	}
	for _, spec := range keyFiles {
		kid, path, ok := strings.Cut(spec, "=")
		if !ok {
			kid, path = "", spec
		}
		b, err := ReadFileLimited(path, jws.MaxJWKSBytes)
		if err != nil {
			return Usagef("--verify-key %s: %v", path, err)
		}
		if blk, _ := pem.Decode(b); blk != nil {
			pub, err := x509.ParsePKIXPublicKey(blk.Bytes)
			if err != nil {
				return Usagef("--verify-key %s: not a PEM public key (PKIX): %v", path, err)
			}
			ids := kids
			if kid != "" {
				ids = []string{kid}
			}
			for _, id := range ids {
				v.Keys.Add(jws.Key{KID: id, Public: pub})
			}
			continue
		}
		ks, err := jws.ParseJWKS(b)
		if err != nil {
			return Usagef("--verify-key %s: neither a PEM public key nor a JWKS: %v", path, err)
		}
		v.Keys.Add(ks.All()...)
	}
	if jwks != "" {
		if strings.HasPrefix(jwks, "http://") || strings.HasPrefix(jwks, "https://") {
			if _, err := jws.Origin(jwks); err != nil {
				return Usagef("--jwks %q: %v", RedactURL(jwks), err)
			}
			v.Remote = append(v.Remote, jws.NewRemoteJWKS(jwks, jws.FetchOptions{Timeout: 15 * time.Second}))
		} else {
			b, err := ReadFileLimited(jwks, jws.MaxJWKSBytes)
			if err != nil {
				return Usagef("--jwks %s: %v", jwks, err)
			}
			ks, err := jws.ParseJWKS(b)
			if err != nil {
				return Usagef("--jwks %s: %v", jwks, err)
			}
			v.Keys.Add(ks.All()...)
		}
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
