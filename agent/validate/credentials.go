package validate

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// secretKeyRe matches member names that hold secrets, secretQuery query
// parameters that do, and tokenRes well-known token formats.
var (
	secretKeyRe = regexp.MustCompile(`(?i)^(password|passwd|secret|client_?secret|api_?key|apikey|access_?token|refresh_?token|token|private_?key|bearer|authorization|credentials?)$`)
	secretQuery = regexp.MustCompile(`(?i)^(password|passwd|secret|client_secret|api_?key|apikey|access_token|token|key|sig|signature|auth)$`)
	tokenRes    = []*regexp.Regexp{
		regexp.MustCompile(`eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]+`), // JWT
		regexp.MustCompile(`(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{16,}`),
		regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{20,}`),            // OpenAI-style keys
		regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),               // AWS access key id
		regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`),       // GitHub tokens
		regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`),     // Slack tokens
		regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----`), // PEM keys
	}
)

// credentials reports credentials embedded anywhere in the card except in
// signatures (which are base64url by design).
func (c *checker) credentials(card map[string]any, _ string) {
	rest := make(map[string]any, len(card))
	for k, v := range card {
		if k != "signatures" {
			rest[k] = v
		}
	}
	const fix = "remove it: an Agent Card is public; credentials are obtained out of band and securitySchemes only says how to authenticate"
	walkStrings(rest, "", func(ptr, key, s string) {
		if s == "" {
			return
		}
		if key != "" && secretKeyRe.MatchString(key) && !strings.HasPrefix(ptr, "/securitySchemes/") {
			c.add(Error, ptr, fmt.Sprintf("member %q looks like an embedded credential", key), fix)
			return
		}
		if u, err := url.Parse(s); err == nil && u.Scheme != "" && u.Host != "" {
			if _, hasPw := u.User.Password(); hasPw || (u.User != nil && u.User.Username() != "") {
				c.add(Error, ptr, "URL contains user credentials", fix)
				return
			}
			for q := range u.Query() {
				if secretQuery.MatchString(q) {
					c.add(Error, ptr, fmt.Sprintf("URL carries a credential in its %q query parameter", q), fix)
					return
				}
			}
		}
		for _, re := range tokenRes {
			if re.MatchString(s) {
				c.add(Error, ptr, "value looks like a token or key", fix)
				return
			}
		}
	})
}
