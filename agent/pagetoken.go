package agent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
)

// pageTokens makes and checks opaque ListTasks page tokens: a keyset cursor
// with an HMAC bound to the caller and the filters, so a token cannot be
// forged, altered or replayed with other filters.
type pageTokens struct {
	key []byte
}

type pageFilter struct {
	owner, contextID, status string
	after                    time.Time
}

func (p pageTokens) mac(f pageFilter, payload []byte) []byte {
	m := hmac.New(sha256.New, p.key)
	for _, s := range []string{f.owner, f.contextID, f.status} {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(s)))
		m.Write(n[:])
		m.Write([]byte(s))
	}
	var a [8]byte
	if !f.after.IsZero() {
		binary.BigEndian.PutUint64(a[:], uint64(f.after.UnixMilli()))
	}
	m.Write(a[:])
	m.Write(payload)
	return m.Sum(nil)[:16]
}

func (p pageTokens) encode(f pageFilter, c *store.Cursor) string {
	if c == nil {
		return ""
	}
	payload := make([]byte, 8, 8+len(c.TaskID))
	binary.BigEndian.PutUint64(payload, uint64(c.StatusTime.UnixMilli()))
	payload = append(payload, c.TaskID...)
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(p.mac(f, payload))
}

// decode returns the cursor in token, or false when the token is malformed,
// forged, or was made for other filters.
func (p pageTokens) decode(f pageFilter, token string) (*store.Cursor, bool) {
	if len(token) > 512 {
		return nil, false
	}
	body, sig, ok := strings.Cut(token, ".")
	if !ok {
		return nil, false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(body)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || len(payload) < 9 {
		return nil, false
	}
	if !hmac.Equal(mac, p.mac(f, payload)) {
		return nil, false
	}
	ms := int64(binary.BigEndian.Uint64(payload[:8]))
	return &store.Cursor{StatusTime: time.UnixMilli(ms).UTC(), TaskID: string(payload[8:])}, true
}
