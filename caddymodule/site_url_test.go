package caddymodule

import "testing"

// XPORT-4, XPORT-5: the stand-in request of a site, for the card's base
// URL of carriers without an HTTP request: the route's host (else the
// listen host, a wildcard as 127.0.0.1) and the listen port, the scheme's
// default port left out; none for a Unix socket.
func TestSiteRequest(t *testing.T) {
	for _, tc := range []struct {
		listen, hosts []string
		tls           bool
		host          string
	}{
		{[]string{"127.0.0.1:8080"}, nil, false, "127.0.0.1:8080"},
		{[]string{":8080"}, nil, false, "127.0.0.1:8080"},
		{[]string{"tcp/:9000"}, []string{"*.example.com", "agent.example.com"}, true, "agent.example.com:9000"},
		{[]string{":443"}, []string{"agent.example.com"}, true, "agent.example.com"},
		{[]string{":80"}, []string{"agent.example.com"}, false, "agent.example.com"},
		{[]string{":443"}, []string{"::1"}, true, "[::1]"},
		{[]string{"unix//run/a2a.sock", ":7000"}, nil, false, "127.0.0.1:7000"},
	} {
		r := siteRequest(tc.listen, tc.hosts, tc.tls)
		if r == nil || r.Host != tc.host || (r.TLS != nil) != tc.tls {
			t.Errorf("siteRequest(%v, %v, %v) = %+v, want host %s", tc.listen, tc.hosts, tc.tls, r, tc.host)
		}
	}
	if r := siteRequest([]string{"unix//run/a2a.sock"}, []string{"x"}, false); r != nil {
		t.Errorf("a Unix socket site: %v, want none", r.Host)
	}
}
