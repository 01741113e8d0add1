package caddymodule

import (
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// stdioCandidate is one a2a handler of an adapted config, with the site
// that serves it.
type stdioCandidate struct {
	server  string   // the http server's name (srv0, …)
	listen  []string // its listen addresses
	hosts   []string // the Host matcher of the route holding the handler
	tls     bool     // the server serves TLS (policies, or the HTTPS port)
	handler json.RawMessage
	auth    json.RawMessage // the a2a_auth before it in its route (nil: none)
}

// label names the candidate's site in messages: its first host and
// listen address.
func (c stdioCandidate) label() string {
	host, addr := "", ""
	if len(c.hosts) > 0 {
		host = c.hosts[0]
	}
	if len(c.listen) > 0 {
		addr = c.listen[0]
	}
	if host == "" {
		return addr
	}
	if _, port, err := net.SplitHostPort(addr); err == nil {
		return net.JoinHostPort(host, port)
	}
	return host
}

// matches reports whether a --site value names the candidate's site: its
// host ("agent.example.com"), host and port ("localhost:8080"), listen
// address (":8080"), an address with a scheme ("http://localhost:8080")
// or the server's name ("srv0").
func (c stdioCandidate) matches(site string) bool {
	site = strings.TrimSuffix(site, "/")
	if i := strings.Index(site, "://"); i >= 0 {
		site = site[i+3:]
	}
	if site == c.server || slices.Contains(c.hosts, site) || slices.Contains(c.listen, site) {
		return true
	}
	host, port, err := net.SplitHostPort(site)
	if err != nil {
		return false
	}
	if host != "" && len(c.hosts) > 0 && !slices.Contains(c.hosts, host) {
		return false
	}
	for _, l := range c.listen {
		if _, lport, err := net.SplitHostPort(l); err == nil && lport == port {
			return true
		}
	}
	return false
}

// adaptedHTTP is the part of the http app of an adapted config that site
// selection reads.
type adaptedHTTP struct {
	GracePeriod caddy.Duration `json:"grace_period,omitempty"`
	HTTPSPort   int            `json:"https_port,omitempty"`
	Servers     map[string]struct {
		Listen []string        `json:"listen,omitempty"`
		Routes []routeShape    `json:"routes,omitempty"`
		TLS    json.RawMessage `json:"tls_connection_policies,omitempty"`
	} `json:"servers,omitempty"`
}

// routeShape is a route of the http app: its matchers and handlers.
type routeShape struct {
	Match  []map[string]json.RawMessage `json:"match,omitempty"`
	Handle []json.RawMessage            `json:"handle,omitempty"`
}

// stdioCandidates lists the a2a handlers of the http app's JSON in config
// order (servers by name, routes in order, subroutes depth first), and
// returns the app's grace period.
func stdioCandidates(httpApp json.RawMessage) ([]stdioCandidate, time.Duration, error) {
	var app adaptedHTTP
	if len(httpApp) > 0 {
		if err := json.Unmarshal(httpApp, &app); err != nil {
			return nil, 0, fmt.Errorf("reading the http app: %w", err)
		}
	}
	names := make([]string, 0, len(app.Servers))
	for name := range app.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	var out []stdioCandidate
	for _, name := range names {
		srv := app.Servers[name]
		base := stdioCandidate{server: name, listen: srv.Listen, tls: len(srv.TLS) > 0 || listensOn(srv.Listen, httpsPort(app.HTTPSPort))}
		out = append(out, walkRoutes(srv.Routes, base, 0)...)
	}
	return out, time.Duration(app.GracePeriod), nil
}

// httpsPort is the http app's HTTPS port (default 443): automatic HTTPS
// serves TLS there though the adapted config has no policies yet.
func httpsPort(p int) int {
	if p == 0 {
		return 443
	}
	return p
}

// listensOn reports whether one of the listen addresses is on port.
func listensOn(listen []string, port int) bool {
	for _, l := range listen {
		if na, err := caddy.ParseNetworkAddress(l); err == nil && !na.IsUnixNetwork() && int(na.StartPort) == port {
			return true
		}
	}
	return false
}

// maxRouteDepth bounds the subroute nesting walked.
const maxRouteDepth = 16

// walkRoutes collects the a2a handlers of routes; a route's Host matcher
// narrows the hosts of what it holds.
func walkRoutes(routes []routeShape, base stdioCandidate, depth int) []stdioCandidate {
	if depth > maxRouteDepth {
		return nil
	}
	var out []stdioCandidate
	for _, rt := range routes {
		c := base
		if hosts := routeHosts(rt); len(hosts) > 0 {
			c.hosts = hosts
		}
		c.auth = base.auth
		for _, raw := range rt.Handle {
			var h struct {
				Handler string       `json:"handler"`
				Routes  []routeShape `json:"routes"`
			}
			if json.Unmarshal(raw, &h) != nil {
				continue
			}
			switch h.Handler {
			case "a2a_auth":
				c.auth = raw
			case "a2a":
				hc := c
				hc.handler = raw
				out = append(out, hc)
			case "subroute":
				out = append(out, walkRoutes(h.Routes, c, depth+1)...)
			}
		}
	}
	return out
}

// routeHosts returns the hosts of a route's host matchers.
func routeHosts(rt routeShape) []string {
	var hosts []string
	for _, set := range rt.Match {
		var hs []string
		if raw, ok := set["host"]; ok && json.Unmarshal(raw, &hs) == nil {
			hosts = append(hosts, hs...)
		}
	}
	return hosts
}

// pickStdioSite returns the candidate named by site, or the first one when
// site is "".
func pickStdioSite(cands []stdioCandidate, site string) (stdioCandidate, error) {
	if len(cands) == 0 {
		return stdioCandidate{}, fmt.Errorf("the config has no site with an a2a handler")
	}
	var match []stdioCandidate
	for _, c := range cands {
		if site == "" || c.matches(site) {
			match = append(match, c)
		}
	}
	// A multi-agent site's agent routes come before its root's: serve the
	// root, whose frames reach the agents by tenant (TURN-10).
	for _, c := range match {
		if c.tenant() == "" {
			return c, nil
		}
	}
	if len(match) > 0 {
		return match[0], nil
	}
	labels := make([]string, 0, len(cands))
	for _, c := range cands {
		labels = append(labels, c.label())
	}
	return stdioCandidate{}, fmt.Errorf("no site with an a2a handler matches %q (sites: %s)", site, strings.Join(labels, ", "))
}

// stdoutToStderr rewrites every log writer of a logging config that writes
// to stdout to write to stderr: in stdio mode stdout carries the protocol
// only (XPORT-4).
func stdoutToStderr(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if k == "output" && val == "stdout" {
				t[k] = "stderr"
				continue
			}
			t[k] = stdoutToStderr(val)
		}
	case []any:
		for i := range t {
			t[i] = stdoutToStderr(t[i])
		}
	}
	return v
}
