package auth

import (
	"crypto/sha256"
	"fmt"
	"strings"
)

// secretCred is the digest of a bearer token or API key and the principal
// it names.
type secretCred struct {
	digest    [32]byte
	principal string
}

// credentialBuilder adds each principal's credentials to an
// Authenticator for New, rejecting duplicate names, tokens and keys.
type credentialBuilder struct {
	a          *Authenticator
	resolve    resolveFunc
	names      map[string]bool
	tokenOwner map[[32]byte]string
	keyOwner   map[[32]byte]string
}

func newCredentialBuilder(a *Authenticator, resolve resolveFunc) *credentialBuilder {
	return &credentialBuilder{
		a:          a,
		resolve:    resolve,
		names:      map[string]bool{},
		tokenOwner: map[[32]byte]string{},
		keyOwner:   map[[32]byte]string{},
	}
}

// add checks principal i of allPrincipals (0: the default principal,
// skipped when it has no credential) and records its credentials. It
// returns every problem found, naming fields but never values.
func (b *credentialBuilder) add(i int, p Principal) []error {
	field := "principal " + quoteName(p.Name)
	if i == 0 {
		field = "default principal"
		if p.Token == "" && p.Basic == nil && p.APIKey == "" {
			return nil
		}
	}
	if strings.TrimSpace(p.Name) == "" {
		return []error{fmt.Errorf("principals[%d] name: must not be empty", i-1)}
	}
	if !validName(p.Name) {
		return []error{fmt.Errorf("%s name: only printable characters without spaces are allowed (max 128)", field)}
	}
	if b.names[p.Name] {
		return []error{fmt.Errorf("%s: duplicate principal name", field)}
	}
	b.names[p.Name] = true
	if p.Token == "" && p.Basic == nil && p.APIKey == "" {
		return []error{fmt.Errorf("%s: no credential (set token, basic or api_key)", field)}
	}
	var errs []error
	if p.Token != "" {
		if err := b.addSecret(field, "token", "token", p.Token, p.Name, b.tokenOwner, &b.a.tokens); err != nil {
			errs = append(errs, err)
		}
	}
	if p.APIKey != "" {
		if err := b.addSecret(field, "api_key", "key", p.APIKey, p.Name, b.keyOwner, &b.a.keys); err != nil {
			errs = append(errs, err)
		}
	}
	if p.Basic != nil {
		if err := b.a.addBasic(field, p, b.resolve); err != nil {
			errs = append(errs, err)
		}
	}
	b.a.principals = append(b.a.principals, p.Name)
	return errs
}

// addSecret resolves and checks the token or API key v of field (option
// name kind, called noun in the duplicate error) and appends its digest
// to dst, unless owner shows another principal already uses it.
func (b *credentialBuilder) addSecret(field, kind, noun, v, principal string, owner map[[32]byte]string, dst *[]secretCred) error {
	s, err := b.resolve(field+" "+kind, v)
	if err != nil {
		return err
	}
	if err := checkSecret(field+" "+kind, s); err != nil {
		return err
	}
	d := sha256.Sum256([]byte(s))
	if o, dup := owner[d]; dup {
		return fmt.Errorf("%s %s: same %s as %s", field, kind, noun, o)
	}
	owner[d] = field
	*dst = append(*dst, secretCred{digest: d, principal: principal})
	return nil
}

func quoteName(s string) string { return fmt.Sprintf("%q", s) }

func validName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func checkSecret(field, s string) error {
	for _, c := range s {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("%s: must not contain spaces or control characters", field)
		}
	}
	return nil
}

func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", c)) {
			return false
		}
	}
	return true
}
