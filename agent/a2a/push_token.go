package a2a

import "strings"

// legacyTokenMark prefixes the plain token of a Legacy push config (one
// created by an A2A 0.3 caller, RPC-2) before it is sealed, so the mark
// travels with the sealed token into every delivery job (local outbox,
// Redis Streams, dead letters) without a store column, and push delivery
// knows to send 0.3 payloads. Client tokens cannot hold NUL (PUSH-1), so
// the mark cannot be forged, and it is inside the AES-GCM seal (PUSH-3).
const legacyTokenMark = "\x00a2a-v0.3\x00"

// TokenToSeal returns the value to seal for the token of c: the token,
// marked when c is Legacy.
func (c *TaskPushNotificationConfig) TokenToSeal() string {
	if c.Legacy {
		return legacyTokenMark + c.Token
	}
	return c.Token
}

// OpenedToken splits an opened (unsealed) token into the client's token
// and whether its config is Legacy (see TokenToSeal).
func OpenedToken(opened string) (token string, legacy bool) {
	if rest, ok := strings.CutPrefix(opened, legacyTokenMark); ok {
		return rest, true
	}
	return opened, false
}
