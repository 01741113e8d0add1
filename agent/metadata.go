package agent

import "github.com/caddy-a2a/caddy-a2a/agent/a2a"

// stripSensitive returns m with credential keys removed from
// metadata.<ns> (AUTH-5); m itself is not modified.
func stripSensitive(m *a2a.Message, ns string, keys []string) *a2a.Message {
	inner, ok := m.Metadata[ns].(map[string]any)
	if !ok {
		return m
	}
	var drop bool
	for _, k := range keys {
		if _, ok := inner[k]; ok {
			drop = true
			break
		}
	}
	if !drop {
		return m
	}
	c := *m
	c.Metadata = make(map[string]any, len(m.Metadata))
	for k, v := range m.Metadata {
		c.Metadata[k] = v
	}
	cleaned := make(map[string]any, len(inner))
	for k, v := range inner {
		cleaned[k] = v
	}
	for _, k := range keys {
		delete(cleaned, k)
	}
	c.Metadata[ns] = cleaned
	return &c
}

// metadataString returns metadata.<ns>.<key> as a string.
func metadataString(md map[string]any, ns, key string) (string, bool) {
	inner, ok := md[ns].(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := inner[key].(string)
	return s, ok
}

// nsMetadata returns metadata.<ns> as an object, or nil.
func nsMetadata(md map[string]any, ns string) map[string]any {
	inner, _ := md[ns].(map[string]any)
	return inner
}
