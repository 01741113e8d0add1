package agent

import (
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

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
// milliseconds, a 12-bit sub-millisecond sequence, then 62 random bits.
// Ids minted one after the other sort after each other, so the store's
// b-trees keyed by task or context id grow at their right edge: the
// writes of one group commit share their pages instead of dirtying a
// random leaf each (issue 17). The random bytes are read into the stack
// (crypto/rand.Read does not keep its buffer), so an id costs one
// allocation, its string (issue 29), where uuid.NewV7 costs two.
func newID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[8:]) // never fails: crypto/rand crashes the program instead
	milli, seq := v7Time()
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(milli>>40), byte(milli>>32), byte(milli>>24), byte(milli>>16), byte(milli>>8), byte(milli)
	u[6] = 0x70 | byte(seq>>8)&0x0f // version 7
	u[7] = byte(seq)
	u[8] = u[8]&0x3f | 0x80 // variant 10 (RFC 9562)
	return u.String()
}

// v7Clock is the last (milliseconds << 12 | sequence) newID used.
var v7Clock struct {
	sync.Mutex
	last int64
}

// v7Time returns the time in Unix milliseconds and a 12-bit sequence (the
// sub-millisecond nanoseconds / 256), strictly after the pair of any
// earlier call: uuid's own version 7 clock, for this package's ids.
func v7Time() (milli, seq int64) {
	nano := time.Now().UnixNano()
	milli = nano / int64(time.Millisecond)
	now := milli<<12 + (nano-milli*int64(time.Millisecond))>>8
	v7Clock.Lock()
	if now <= v7Clock.last {
		now = v7Clock.last + 1
	}
	v7Clock.last = now
	v7Clock.Unlock()
	return now >> 12, now & 0xfff
}

func readRandom(b []byte) (int, error) { return rand.Read(b) }

// newCorrelationID returns the 8 hex digits of random that name a turn in
// the logs (not a version 7 id's first 8, which are its time).
func newCorrelationID() string {
	var b [4]byte
	var h [8]byte
	_, _ = rand.Read(b[:])
	hex.Encode(h[:], b[:])
	return string(h[:])
}
