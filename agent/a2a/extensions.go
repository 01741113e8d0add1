package a2a

import "strings"

// ParseExtensions returns the extension URIs of A2A-Extensions header
// values, in order: each value is a comma-separated list, every URI is
// trimmed of white space and empty ones are dropped. Nil when there are
// none.
func ParseExtensions(values ...string) []string {
	var uris []string
	for _, v := range values {
		for _, uri := range strings.Split(v, ",") {
			if uri = strings.TrimSpace(uri); uri != "" {
				uris = append(uris, uri)
			}
		}
	}
	return uris
}
