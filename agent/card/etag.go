package card

import (
	"crypto/sha256"
	"encoding/hex"
)

// ETag is the strong entity tag (quoted) of a response body: the first
// 128 bits of its SHA-256, as the public card's (Render). The extended
// card's HTTP+JSON answer uses it too (A2A 1.0 §13.3).
func ETag(body []byte) string {
	sum := sha256.Sum256(body)
	return etagOfHash(hex.EncodeToString(sum[:]))
}

// etagOfHash is the entity tag of a body whose hex SHA-256 is h.
func etagOfHash(h string) string { return `"` + h[:32] + `"` }

// ETagMatches applies an If-None-Match header (RFC 9110 §13.1.2: a list
// of entity tags or "*", weak comparison) to etag.
func ETagMatches(header, etag string) bool { return etagMatches(header, etag) }
