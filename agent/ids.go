package agent

import (
	"crypto/rand"
	"encoding/hex"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// MaxIDLength is the longest task or context id accepted (RPC-7).
const MaxIDLength = 128

// validID reports whether s is a well-formed task or context id: non-empty,
// at most 128 characters, only letters, digits, '_', '.', ':' and '-'.
func validID(s string) bool {
	if s == "" || len(s) > MaxIDLength {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '_', c == '.', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// checkID returns InvalidParams naming field when id is malformed.
func checkID(field, id string) error {
	if !validID(id) {
		return a2a.ErrInvalidParams(field, "must be 1 to 128 letters, digits, '_', '.', ':' or '-'")
	}
	return nil
}

// newID returns a random UUID (version 4) string.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

func readRandom(b []byte) (int, error) { return rand.Read(b) }
