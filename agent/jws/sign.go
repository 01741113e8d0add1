// Package jws signs and verifies A2A 1.0 Agent Cards (A2A §8.4): a detached
// JWS (RFC 7515) over the RFC 8785 canonical form of the card without its
// `signatures`. It supports HS256 (shared secret), ES256 (P-256) and EdDSA
// (Ed25519) for signing, and additionally RS256 for verification; keys are
// chosen by the protected header's `kid` from configured secrets, a local
// JWKS, a remote JWKS URL, or a `jku` whose origin is on an allow-list.
//
// The package has no Caddy imports. Errors never contain key material.
package jws

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/url"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Algorithms.
const (
	AlgHS256 = "HS256"
	AlgES256 = "ES256"
	AlgEdDSA = "EdDSA"
	AlgRS256 = "RS256"
)

// MinHMACSecret is the minimum HS256 secret length in bytes (RFC 7518
// §3.2: a key of the same size as the hash output).
const MinHMACSecret = 32

// TypJOSE is the protected header `typ` the gateway writes.
const TypJOSE = "JOSE"

var b64 = base64.RawURLEncoding

// Header is a JWS protected header as used for Agent Card signatures.
type Header struct {
	// Alg is the signature algorithm (HS256, ES256, EdDSA, RS256).
	Alg string `json:"alg"`
	// Kid identifies the key.
	Kid string `json:"kid"`
	// Typ is the media type; "JOSE" for cards.
	Typ string `json:"typ,omitempty"`
	// Jku is an optional URL of a JWKS holding the key.
	Jku string `json:"jku,omitempty"`
	// Crit lists critical extensions; any value makes verification fail.
	Crit []string `json:"crit,omitempty"`
}

// Signer signs card payloads with one key.
type Signer struct {
	kid    string
	alg    string
	jku    string
	secret []byte
	priv   crypto.Signer
}

// NewHMACSigner returns an HS256 signer. The secret must be at least
// MinHMACSecret bytes.
func NewHMACSigner(kid string, secret []byte) (*Signer, error) {
	if err := checkKID(kid); err != nil {
		return nil, err
	}
	if len(secret) < MinHMACSecret {
		return nil, fmt.Errorf("hs256 key %q: secret must be at least %d bytes", kid, MinHMACSecret)
	}
	return &Signer{kid: kid, alg: AlgHS256, secret: append([]byte(nil), secret...)}, nil
}

// ParsePrivateKeyPEM returns a signer for a PEM private key: an EC P-256
// key (PKCS #8 or SEC 1) signs ES256, an Ed25519 key (PKCS #8) signs
// EdDSA. wantAlg, when not empty, must match the key.
func ParsePrivateKeyPEM(kid, wantAlg string, data []byte) (*Signer, error) {
	if err := checkKID(kid); err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, fmt.Errorf("key %q: no PEM block found", kid)
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("key %q: unsupported PEM block %q (want PRIVATE KEY or EC PRIVATE KEY)", kid, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("key %q: parsing private key failed", kid)
	}
	s := &Signer{kid: kid}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("key %q: EC keys must use P-256 for ES256", kid)
		}
		s.alg, s.priv = AlgES256, k
	case ed25519.PrivateKey:
		s.alg, s.priv = AlgEdDSA, k
	default:
		return nil, fmt.Errorf("key %q: unsupported key type %T (want EC P-256 or Ed25519)", kid, key)
	}
	if wantAlg != "" && !strings.EqualFold(wantAlg, s.alg) {
		return nil, fmt.Errorf("key %q: the key is for %s, not %s", kid, s.alg, wantAlg)
	}
	return s, nil
}

// NewSigner wraps an ECDSA P-256 or Ed25519 private key.
func NewSigner(kid string, key crypto.Signer) (*Signer, error) {
	if err := checkKID(kid); err != nil {
		return nil, err
	}
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if k.Curve != elliptic.P256() {
			return nil, fmt.Errorf("key %q: EC keys must use P-256", kid)
		}
		return &Signer{kid: kid, alg: AlgES256, priv: k}, nil
	case ed25519.PrivateKey:
		return &Signer{kid: kid, alg: AlgEdDSA, priv: k}, nil
	}
	return nil, fmt.Errorf("key %q: unsupported key type %T", kid, key)
}

func checkKID(kid string) error {
	if kid == "" {
		return errors.New("key id (kid) must not be empty")
	}
	if len(kid) > 256 {
		return errors.New("key id (kid) is longer than 256 bytes")
	}
	return nil
}

// WithJKU returns a copy of s whose signatures name jku (an absolute https
// or http URL of a JWKS) in the protected header.
func (s *Signer) WithJKU(jku string) (*Signer, error) {
	if jku != "" {
		u, err := url.Parse(jku)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("key %q: jku must be an absolute http(s) URL without credentials", s.kid)
		}
	}
	c := *s
	c.jku = jku
	return &c, nil
}

// KID returns the key id.
func (s *Signer) KID() string { return s.kid }

// Alg returns the JWS algorithm.
func (s *Signer) Alg() string { return s.alg }

// JKU returns the jku written into signatures, if any.
func (s *Signer) JKU() string { return s.jku }

// Sign returns a detached JWS signature over payload.
func (s *Signer) Sign(payload []byte) (a2a.AgentCardSignature, error) {
	protected, sig, err := s.sign(TypJOSE, payload)
	if err != nil {
		return a2a.AgentCardSignature{}, err
	}
	return a2a.AgentCardSignature{Protected: protected, Signature: sig}, nil
}

// TypJWT is the protected header `typ` of the JWTs the gateway issues
// (signed push notifications, PUSH-8).
const TypJWT = "JWT"

// SignJWT returns the compact JWS (header.payload.signature) of claims, a
// JSON object, with `typ: JWT`: a JWT any JOSE library verifies with the
// signer's public JWK.
func (s *Signer) SignJWT(claims []byte) (string, error) {
	protected, sig, err := s.sign(TypJWT, claims)
	if err != nil {
		return "", err
	}
	return protected + "." + b64.EncodeToString(claims) + "." + sig, nil
}

// sign returns the encoded protected header (with typ) and the encoded
// signature over it and payload.
func (s *Signer) sign(typ string, payload []byte) (protected, signature string, err error) {
	hdr, err := json.Marshal(Header{Alg: s.alg, Kid: s.kid, Typ: typ, Jku: s.jku})
	if err != nil {
		return "", "", err
	}
	protected = b64.EncodeToString(hdr)
	input := []byte(protected + "." + b64.EncodeToString(payload))
	var sig []byte
	switch s.alg {
	case AlgHS256:
		m := hmac.New(sha256.New, s.secret)
		m.Write(input)
		sig = m.Sum(nil)
	case AlgES256:
		k := s.priv.(*ecdsa.PrivateKey)
		d := sha256.Sum256(input)
		r, ss, err := ecdsa.Sign(rand.Reader, k, d[:])
		if err != nil {
			return "", "", fmt.Errorf("signing with %q: %w", s.kid, err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	case AlgEdDSA:
		sig = ed25519.Sign(s.priv.(ed25519.PrivateKey), input)
	default:
		return "", "", fmt.Errorf("signing with %q: unsupported algorithm", s.kid)
	}
	return protected, b64.EncodeToString(sig), nil
}

// PublicJWK returns the public key as a JWK; ok is false for HS256 keys,
// which have no public part.
func (s *Signer) PublicJWK() (JWK, bool) {
	switch s.alg {
	case AlgES256:
		pub := s.priv.(*ecdsa.PrivateKey).PublicKey
		raw, err := pub.Bytes() // uncompressed point 0x04 || X || Y
		if err != nil || len(raw) != 65 {
			return JWK{}, false
		}
		return JWK{Kty: "EC", Kid: s.kid, Alg: AlgES256, Use: "sig", Crv: "P-256",
			X: b64.EncodeToString(raw[1:33]), Y: b64.EncodeToString(raw[33:])}, true
	case AlgEdDSA:
		pub := s.priv.(ed25519.PrivateKey).Public().(ed25519.PublicKey)
		return JWK{Kty: "OKP", Kid: s.kid, Alg: AlgEdDSA, Use: "sig", Crv: "Ed25519", X: b64.EncodeToString(pub)}, true
	}
	return JWK{}, false
}

// SignCard appends one signature per signer to c.Signatures. The payload
// is computed from c without its existing signatures, so every runtime
// field must be filled in before.
func SignCard(c *a2a.AgentCard, signers ...*Signer) error {
	if len(signers) == 0 {
		return nil
	}
	payload, err := CardPayload(c)
	if err != nil {
		return err
	}
	for _, s := range signers {
		sig, err := s.Sign(payload)
		if err != nil {
			return err
		}
		c.Signatures = append(c.Signatures, sig)
	}
	return nil
}

// PublicJWKS returns the JWKS document ({"keys":[…]}) of the public keys
// of signers; HS256 keys are never included.
func PublicJWKS(signers []*Signer) ([]byte, error) {
	set := JWKSet{Keys: []JWK{}}
	for _, s := range signers {
		if k, ok := s.PublicJWK(); ok {
			set.Keys = append(set.Keys, k)
		}
	}
	return json.Marshal(set)
}

// bigInt decodes a base64url unsigned big-endian integer.
func bigInt(s string) (*big.Int, error) {
	b, err := b64.DecodeString(s)
	if err != nil || len(b) == 0 {
		return nil, errors.New("invalid base64url integer")
	}
	return new(big.Int).SetBytes(b), nil
}
