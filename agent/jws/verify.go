package jws

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Limits on signature parts.
const (
	maxProtectedBytes = 8 << 10
	maxSignatureBytes = 2 << 10
	maxSignatures     = 32
)

// ErrNoSignatures is returned by VerifyCard for a card without signatures.
var ErrNoSignatures = errors.New("card has no signatures")

// Verifier checks card signatures. Keys are selected by the protected
// header's kid: first from Keys (secrets and local JWKS files), then from
// Remote (configured JWKS URLs), then, only when the header's jku has an
// origin listed in AllowedJKUOrigins, from that jku. A card cannot vouch
// for itself: a jku outside the allow-list is never fetched.
type Verifier struct {
	// Keys are trusted local keys.
	Keys *KeySet
	// Remote are trusted JWKS URLs.
	Remote []*RemoteJWKS
	// AllowedJKUOrigins lists origins ("https://keys.example.com",
	// scheme://host[:port]) whose jku URLs may be fetched.
	AllowedJKUOrigins []string
	// Algorithms is the algorithm allow-list. Default: HS256, ES256,
	// EdDSA, RS256.
	Algorithms []string
	// Fetch bounds jku downloads.
	Fetch FetchOptions

	mu  sync.Mutex
	jku map[string]*RemoteJWKS
}

// SignatureResult is the outcome for one entry of `signatures`.
type SignatureResult struct {
	// Index is the position in `signatures`.
	Index int
	// Header is the decoded protected header (zero if it did not decode).
	Header Header
	// Err is nil when the signature verified.
	Err error
}

// VerifyCard checks every signature of the card JSON raw and returns one
// result per signature. The error is nil when at least one signature
// verified.
func (v *Verifier) VerifyCard(ctx context.Context, raw []byte) ([]SignatureResult, error) {
	var sigs struct {
		Signatures []a2a.AgentCardSignature `json:"signatures"`
	}
	if len(raw) > MaxCardBytes {
		return nil, fmt.Errorf("card is larger than %d bytes", MaxCardBytes)
	}
	if err := json.Unmarshal(raw, &sigs); err != nil {
		return nil, errors.New("card: signatures is not an array of {protected, signature} objects")
	}
	if len(sigs.Signatures) == 0 {
		return nil, ErrNoSignatures
	}
	if len(sigs.Signatures) > maxSignatures {
		return nil, fmt.Errorf("card has more than %d signatures", maxSignatures)
	}
	payload, err := CanonicalCard(raw)
	if err != nil {
		return nil, err
	}
	payloads := [][]byte{payload}
	if sdk, err := SDKCanonicalCard(raw); err == nil && !bytes.Equal(sdk, payload) {
		payloads = append(payloads, sdk)
	}
	var results []SignatureResult
	ok := false
	for i, s := range sigs.Signatures {
		h, err := v.verify(ctx, s, payloads)
		results = append(results, SignatureResult{Index: i, Header: h, Err: err})
		ok = ok || err == nil
	}
	if !ok {
		var errs []string
		for _, r := range results {
			errs = append(errs, fmt.Sprintf("signatures[%d]: %v", r.Index, r.Err))
		}
		return results, fmt.Errorf("no signature verified (%s)", strings.Join(errs, "; "))
	}
	return results, nil
}

// ParseHeader decodes and checks a base64url protected header.
func ParseHeader(protected string) (Header, error) {
	var h Header
	if len(protected) > maxProtectedBytes {
		return h, errors.New("protected header too large")
	}
	raw, err := b64.DecodeString(protected)
	if err != nil {
		return h, errors.New("protected header is not base64url")
	}
	if err := json.Unmarshal(raw, &h); err != nil {
		return Header{}, errors.New("protected header is not a JSON object with string alg, kid, typ, jku")
	}
	if h.Alg == "" {
		return h, errors.New("protected header has no alg")
	}
	if strings.EqualFold(h.Alg, "none") {
		return h, errors.New(`alg "none" is not allowed`)
	}
	if h.Kid == "" {
		return h, errors.New("protected header has no kid")
	}
	if len(h.Crit) > 0 {
		return h, errors.New("protected header has unsupported crit extensions")
	}
	return h, nil
}

func (v *Verifier) verify(ctx context.Context, s a2a.AgentCardSignature, payloads [][]byte) (Header, error) {
	h, err := ParseHeader(s.Protected)
	if err != nil {
		return h, err
	}
	algs := v.Algorithms
	if len(algs) == 0 {
		algs = []string{AlgHS256, AlgES256, AlgEdDSA, AlgRS256}
	}
	if !slices.Contains(algs, h.Alg) {
		return h, fmt.Errorf("algorithm %q is not allowed", h.Alg)
	}
	if len(s.Signature) > maxSignatureBytes {
		return h, errors.New("signature too large")
	}
	sig, err := b64.DecodeString(s.Signature)
	if err != nil {
		return h, errors.New("signature is not base64url")
	}
	keys, err := v.keys(ctx, h)
	if err != nil {
		return h, err
	}
	if len(keys) == 0 {
		return h, fmt.Errorf("no trusted key with kid %q", h.Kid)
	}
	fits := 0
	for _, k := range keys {
		if !k.Fits(h.Alg) {
			continue
		}
		fits++
		for _, p := range payloads {
			input := []byte(s.Protected + "." + b64.EncodeToString(p))
			if verifyWith(k, h.Alg, input, sig) {
				return h, nil
			}
		}
	}
	if fits == 0 {
		return h, fmt.Errorf("key %q does not fit algorithm %s", h.Kid, h.Alg)
	}
	return h, fmt.Errorf("signature does not match the card (key %q)", h.Kid)
}

func (v *Verifier) keys(ctx context.Context, h Header) ([]Key, error) {
	keys := v.Keys.Lookup(h.Kid)
	var errs []error
	for _, r := range v.Remote {
		ks, err := r.Lookup(ctx, h.Kid)
		if err != nil {
			errs = append(errs, err)
		}
		keys = append(keys, ks...)
	}
	if h.Jku != "" && len(keys) == 0 {
		r, err := v.jkuSource(h.Jku)
		if err != nil {
			return nil, err
		}
		ks, err := r.Lookup(ctx, h.Kid)
		if err != nil {
			return nil, err
		}
		keys = append(keys, ks...)
	}
	if len(keys) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return keys, nil
}

// Origin returns scheme://host[:port] of u, lowercased, with default ports
// removed.
func Origin(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" || (pu.Scheme != "https" && pu.Scheme != "http") {
		return "", errors.New("not an absolute http(s) URL")
	}
	host := strings.ToLower(pu.Hostname())
	port := pu.Port()
	if (pu.Scheme == "https" && port == "443") || (pu.Scheme == "http" && port == "80") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	o := strings.ToLower(pu.Scheme) + "://" + host
	if port != "" {
		o += ":" + port
	}
	return o, nil
}

func (v *Verifier) jkuSource(jku string) (*RemoteJWKS, error) {
	o, err := Origin(jku)
	if err != nil {
		return nil, fmt.Errorf("jku: %v", err)
	}
	allowed := false
	for _, a := range v.AllowedJKUOrigins {
		if ao, err := Origin(a); err == nil && ao == o {
			allowed = true
			break
		}
	}
	if !allowed {
		return nil, fmt.Errorf("jku origin %s is not on the verifier's allow-list", o)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.jku == nil {
		v.jku = map[string]*RemoteJWKS{}
	}
	r, ok := v.jku[jku]
	if !ok {
		if len(v.jku) >= 64 {
			clear(v.jku)
		}
		r = NewRemoteJWKS(jku, v.Fetch)
		v.jku[jku] = r
	}
	return r, nil
}

func verifyWith(k Key, alg string, input, sig []byte) bool {
	switch alg {
	case AlgHS256:
		m := hmac.New(sha256.New, k.Secret)
		m.Write(input)
		return hmac.Equal(m.Sum(nil), sig)
	case AlgES256:
		if len(sig) != 64 {
			return false
		}
		d := sha256.Sum256(input)
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k.Public.(*ecdsa.PublicKey), d[:], r, s)
	case AlgEdDSA:
		return len(sig) == ed25519.SignatureSize && ed25519.Verify(k.Public.(ed25519.PublicKey), input, sig)
	case AlgRS256:
		d := sha256.Sum256(input)
		return rsa.VerifyPKCS1v15(k.Public.(*rsa.PublicKey), crypto.SHA256, d[:], sig) == nil
	}
	return false
}
