package validate

import (
	"fmt"
	"strings"
)

// urls reports URL-valued fields that do not use HTTPS (errors with
// Options.Production, else warnings).
func (c *checker) urls(card map[string]any) {
	sev := Warning
	fix := "serve it over HTTPS"
	if c.opts.Production {
		sev = Error
	}
	check := func(ptr, u string) {
		if strings.HasPrefix(strings.ToLower(u), "http://") {
			c.add(sev, ptr, fmt.Sprintf("URL %q does not use HTTPS", u), fix)
		}
	}
	for _, f := range []string{"documentationUrl", "iconUrl", "url"} {
		if s, ok := str(card, f); ok {
			check(Pointer(f), s)
		}
	}
	if p, ok := card["provider"].(map[string]any); ok {
		if s, ok := str(p, "url"); ok {
			check("/provider/url", s)
		}
	}
	arr, _ := card["supportedInterfaces"].([]any)
	for i, e := range arr {
		if m, ok := e.(map[string]any); ok {
			if s, ok := str(m, "url"); ok {
				check(Pointer("supportedInterfaces", i, "url"), s)
			}
		}
	}
	if schemes, ok := card["securitySchemes"].(map[string]any); ok {
		walkStrings(schemes, "/securitySchemes", func(ptr, key, s string) {
			if strings.HasSuffix(key, "Url") {
				check(ptr, s)
			}
		})
	}
}
