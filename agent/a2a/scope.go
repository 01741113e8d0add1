package a2a

// ValidScope reports whether s is one OAuth 2.0 scope token (RFC 6749
// §3.3: one or more of %x21 / %x23-5B / %x5D-7E, no spaces), the unit of
// SecurityRequirement scopes (AUTH-8). At most 256 bytes.
func ValidScope(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
