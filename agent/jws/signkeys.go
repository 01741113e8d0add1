package jws

import (
	"fmt"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/internal/keyfile"
)

// maxKeyFileBytes bounds a PEM private key file.
const maxKeyFileBytes = 64 << 10

// SignKey is one configured card signing key (CARD-6).
type SignKey struct {
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

// LoadSigners checks the configured keys and builds one signer per key, in
// order (CARD-6): kids are required and unique, hs256 takes a secret and
// es256/eddsa a key_file. resolve (nil: identity) expands placeholders in
// Secret and KeyFile before use. A key_file must be mode 0600 or stricter
// (internal/keyfile). Errors never hold a secret, and name a key file by
// its base name only.
func LoadSigners(keys []SignKey, resolve func(string) string) ([]*Signer, error) {
	return LoadSignersFor("card sign", keys, resolve)
}

// LoadSignersFor is LoadSigners with errors prefixed by what (e.g. "push
// sign") instead of "card sign".
func LoadSignersFor(what string, keys []SignKey, resolve func(string) string) ([]*Signer, error) {
	if resolve == nil {
		resolve = func(s string) string { return s }
	}
	if err := CheckSignKeys(what, keys); err != nil {
		return nil, err
	}
	var signers []*Signer
	for _, k := range keys {
		s, err := loadSigner(what, k, resolve)
		if err != nil {
			return nil, err
		}
		signers = append(signers, s)
	}
	return signers, nil
}

// CheckSignKeys checks keys without resolving a placeholder or reading a
// file, so a config can be checked before it is provisioned: kids are
// required and unique, the algorithm is hs256 (with a secret) or es256 or
// eddsa (with a key_file). Errors are prefixed by what (e.g. "card sign").
func CheckSignKeys(what string, keys []SignKey) error {
	kids := map[string]bool{}
	for i, k := range keys {
		if k.KID == "" {
			return fmt.Errorf("%s[%d]: kid is required", what, i)
		}
		if kids[k.KID] {
			return fmt.Errorf("%s %q: duplicate kid", what, k.KID)
		}
		kids[k.KID] = true
		where := fmt.Sprintf("%s %q", what, k.KID)
		switch strings.ToLower(k.Alg) {
		case "hs256":
			if k.KeyFile != "" {
				return fmt.Errorf("%s: hs256 takes a secret, not a key_file", where)
			}
			if k.Secret == "" {
				return fmt.Errorf("%s: secret is required", where)
			}
		case "es256", "eddsa":
			if k.Secret != "" {
				return fmt.Errorf("%s: %s takes a key_file, not a secret", where, k.Alg)
			}
			if k.KeyFile == "" {
				return fmt.Errorf("%s: key_file is required", where)
			}
		default:
			return fmt.Errorf("%s: alg must be hs256, es256 or eddsa", where)
		}
	}
	return nil
}

// loadSigner builds the signer of one key checked by CheckSignKeys.
func loadSigner(what string, k SignKey, resolve func(string) string) (*Signer, error) {
	where := fmt.Sprintf("%s %q", what, k.KID)
	var s *Signer
	var err error
	switch strings.ToLower(k.Alg) {
	case "hs256":
		if k.KeyFile != "" {
			return nil, fmt.Errorf("%s: hs256 takes a secret, not a key_file", where)
		}
		secret := strings.TrimRight(resolve(k.Secret), "\r\n")
		if secret == "" {
			return nil, fmt.Errorf("%s: secret is empty (check its placeholder)", where)
		}
		s, err = NewHMACSigner(k.KID, []byte(secret))
	case "es256", "eddsa":
		if k.Secret != "" {
			return nil, fmt.Errorf("%s: %s takes a key_file, not a secret", where, k.Alg)
		}
		path := resolve(k.KeyFile)
		if path == "" {
			return nil, fmt.Errorf("%s: key_file is required", where)
		}
		pemBytes, rerr := readKeyFile(path)
		if rerr != nil {
			return nil, fmt.Errorf("%s: key_file: %w", where, rerr)
		}
		alg := AlgES256
		if strings.EqualFold(k.Alg, "eddsa") {
			alg = AlgEdDSA
		}
		s, err = ParsePrivateKeyPEM(k.KID, alg, pemBytes)
	default:
		return nil, fmt.Errorf("%s: alg must be hs256, es256 or eddsa", where)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if k.JKU != "" {
		if s, err = s.WithJKU(k.JKU); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return s, nil
}

// readKeyFile reads a private key file under the one key-file rule
// (internal/keyfile: mode 0600, at most maxKeyFileBytes); errors name the
// file by its base name only.
func readKeyFile(path string) ([]byte, error) {
	return keyfile.Read(path, maxKeyFileBytes)
}
