package validate

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
)

// bindings are the standard protocol bindings; versionRe and hostPortRe
// check protocolVersion and gRPC targets.
var (
	bindings = []string{"JSONRPC", "GRPC", "HTTP+JSON"}
	// gatewayBindings are the custom bindings caddy-a2a advertises under
	// lower-case names (XPORT-3, XPORT-5, XPORT-6): not errors on its own
	// cards; clients that do not know them skip them.
	gatewayBindings = []string{"websocket", "grpc-jsonrpc", "redis-streams", "stdio"}
	versionRe       = regexp.MustCompile(`^\d+\.\d+$`)
	hostPortRe      = regexp.MustCompile(`^[A-Za-z0-9.\-\[\]:]+:\d+$`)
)

// interfaces checks each supportedInterfaces entry.
func (c *checker) interfaces(card map[string]any) {
	arr, _ := card["supportedInterfaces"].([]any)
	for i, e := range arr {
		ptr := Pointer("supportedInterfaces", i)
		m, ok := e.(map[string]any)
		if !ok {
			c.add(Error, ptr, "interface is not an object", "use {url, protocolBinding, protocolVersion}")
			continue
		}
		u, _ := str(m, "url")
		b, _ := str(m, "protocolBinding")
		v, _ := str(m, "protocolVersion")
		if b == "" {
			c.add(Error, ptr+"/protocolBinding", "protocolBinding is missing", `set "JSONRPC", "HTTP+JSON", "GRPC" or a URI for a custom binding`)
		} else if slices.Contains(gatewayBindings, b) {
			c.add(Info, ptr+"/protocolBinding", fmt.Sprintf("protocolBinding %q is a caddy-a2a custom binding; other clients skip it", b), "")
		} else if !slices.Contains(bindings, b) && !isAbsURI(b) {
			c.add(Error, ptr+"/protocolBinding", fmt.Sprintf("protocolBinding %q is not JSONRPC, GRPC, HTTP+JSON or a URI", b),
				`use the exact upper-case names, e.g. "HTTP+JSON" (not "REST" or "jsonrpc")`)
		}
		if v == "" {
			c.add(Error, ptr+"/protocolVersion", "protocolVersion is missing", `set "1.0"`)
		} else if !versionRe.MatchString(v) {
			c.add(Error, ptr+"/protocolVersion", fmt.Sprintf("protocolVersion %q is not Major.Minor", v), `use "1.0"`)
		}
		switch {
		case u == "":
			c.add(Error, ptr+"/url", "url is missing", "set the absolute URL of this endpoint")
		case slices.Contains(gatewayBindings, b):
			if !isAbsURI(u) && !hostPortRe.MatchString(u) {
				c.add(Error, ptr+"/url", fmt.Sprintf("url %q of a custom binding is not an absolute URI or host:port", u), "use e.g. wss://agent.example.com/ws")
			}
		case b == "GRPC":
			if !hostPortRe.MatchString(u) && !isAbsURL(u) {
				c.add(Error, ptr+"/url", fmt.Sprintf("gRPC url %q is not host:port", u), "use host:port, e.g. agent.example.com:443")
			}
		case !isAbsURL(u):
			c.add(Error, ptr+"/url", fmt.Sprintf("url %q is not an absolute http(s) URL", u), "use an absolute https URL")
		}
	}
}

// isAbsURL reports whether s is an absolute http(s) URL.
func isAbsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// isAbsURI reports whether s is an absolute URI.
func isAbsURI(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme != "" && (u.Host != "" || u.Opaque != "")
}
