package validate

import (
	"strings"
)

// provider checks the optional provider object.
func (c *checker) provider(card map[string]any) {
	raw, present := card["provider"]
	if !present {
		return
	}
	p, ok := raw.(map[string]any)
	if !ok {
		c.add(Error, "/provider", "provider is not an object", `use {"organization": …, "url": …}`)
		return
	}
	if _, ok := p["name"]; ok {
		sev := Error
		if _, ok := p["organization"]; ok {
			sev = Warning
		}
		c.add(sev, "/provider/name", "provider.name is a v0.x field; v1.0 uses provider.organization", "rename provider.name to provider.organization")
	} else if s, _ := str(p, "organization"); strings.TrimSpace(s) == "" {
		c.add(Error, "/provider/organization", "provider.organization is required when provider is present", "set the organisation running the agent")
	}
	if s, _ := str(p, "url"); s == "" {
		c.add(Error, "/provider/url", "provider.url is required when provider is present", "set the provider's web site, e.g. https://example.com")
	}
}
