package auth

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// basicCred is one Basic user's password (digest or bcrypt hash) and the
// principal it names.
type basicCred struct {
	digest    [32]byte // plaintext password digest, when hash is nil
	hash      []byte   // bcrypt hash
	principal string
}

// fakeBcrypt is compared against for unknown users so they cost the same
// as known bcrypt users.
var fakeBcrypt = []byte("$2a$10$aetn5KWkJm/o6DlAdTcxpu6hCmamOkuEPxHTa19zNS5ey.RUBXzhK")

var fakeDigest = sha256.Sum256([]byte("caddy-a2a fake password"))

// IsBcrypt reports whether s looks like a bcrypt hash.
func IsBcrypt(s string) bool {
	if !(strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")) {
		return false
	}
	_, err := bcrypt.Cost([]byte(s))
	return err == nil
}

func (a *Authenticator) addBasic(field string, p Principal, resolve func(string, string) (string, error)) error {
	if p.Basic.Username == "" {
		return fmt.Errorf("%s basic username: must not be empty", field)
	}
	if p.Basic.Password == "" {
		return fmt.Errorf("%s basic password: required when a basic username is set", field)
	}
	user, err := resolve(field+" basic username", p.Basic.Username)
	if err != nil {
		return err
	}
	if strings.Contains(user, ":") || !validName(user) {
		return fmt.Errorf("%s basic username: must be printable, without spaces or ':'", field)
	}
	pass, err := resolve(field+" basic password", p.Basic.Password)
	if err != nil {
		return err
	}
	if _, dup := a.users[user]; dup {
		return fmt.Errorf("%s basic username: already used by another principal", field)
	}
	c := basicCred{principal: p.Name}
	if IsBcrypt(pass) {
		c.hash = []byte(pass)
	} else {
		c.digest = sha256.Sum256([]byte(pass))
	}
	a.users[user] = c
	return nil
}

func (a *Authenticator) checkBasic(user, pass string) (string, bool) {
	c, known := a.users[user]
	if !known {
		// same cost as a known bcrypt user
		_ = bcrypt.CompareHashAndPassword(fakeBcrypt, []byte(pass))
		d := sha256.Sum256([]byte(pass))
		subtle.ConstantTimeCompare(fakeDigest[:], d[:])
		return "", false
	}
	if c.hash != nil {
		if bcrypt.CompareHashAndPassword(c.hash, []byte(pass)) == nil {
			return c.principal, true
		}
		return "", false
	}
	d := sha256.Sum256([]byte(pass))
	if subtle.ConstantTimeCompare(c.digest[:], d[:]) == 1 {
		return c.principal, true
	}
	return "", false
}
