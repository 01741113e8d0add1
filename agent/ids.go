package agent

import (
	"crypto/rand"

	"github.com/google/uuid"

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

// newID returns a time-ordered (version 7) UUID string: 48 bits of Unix
// milliseconds, then 74 random bits. Ids minted one after the other sort
// after each other, so the store's b-trees keyed by task or context id grow
// at their right edge: the writes of one group commit share their pages
// instead of dirtying a random leaf each (issue 17).
func newID() string {
	u, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString() // the random source failed: fall back to version 4
	}
	return u.String()
}

func readRandom(b []byte) (int, error) { return rand.Read(b) }

// newCorrelationID returns the 8 hex digits of random that name a turn in
// the logs (not a version 7 id's first 8, which are its time).
func newCorrelationID() string { return uuid.NewString()[:8] }
