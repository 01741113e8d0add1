package caddymodule

import (
	"crypto/tls"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// siteRequest is a stand-in request for a site served on listen (the
// http server's addresses) under hosts (its route's Host matcher), with
// TLS or not: carriers without an HTTP request of their own (Redis
// Streams, stdio) build the card's base URL from it — as a client of the
// site's HTTP endpoint would reach it — instead of the card's fallback
// http://127.0.0.1/ (XPORT-4, XPORT-5). nil when no TCP address is known
// (a Unix socket, no listener): the card's fallback stays. public_url,
// when set, wins as for every request.
func siteRequest(listen, hosts []string, withTLS bool) *http.Request {
	port := ""
	for _, l := range listen {
		na, err := caddy.ParseNetworkAddress(l)
		if err != nil || na.IsUnixNetwork() || na.IsFdNetwork() {
			continue
		}
		port = strconv.FormatUint(uint64(na.StartPort), 10)
		if len(hosts) == 0 {
			hosts = []string{na.Host}
		}
		break
	}
	if port == "" {
		return nil
	}
	host := ""
	for _, h := range hosts {
		if h != "" && !strings.Contains(h, "*") && !strings.Contains(h, "{") {
			host = h
			break
		}
	}
	if host == "" {
		host = "127.0.0.1"
	}
	hostport := net.JoinHostPort(host, port)
	if (withTLS && port == "443") || (!withTLS && port == "80") {
		hostport = host
		if strings.Contains(host, ":") {
			hostport = "[" + host + "]"
		}
	}
	r := &http.Request{Method: http.MethodGet, Host: hostport, Header: http.Header{}}
	if withTLS {
		r.TLS = &tls.ConnectionState{}
	}
	return r
}

// serverTLS reports whether a live http server serves TLS.
func serverTLS(srv *caddyhttp.Server) bool {
	return len(srv.TLSConnPolicies) > 0
}

// matcherHosts returns the hosts of the Host matchers of provisioned
// matcher sets (the raw JSON is released once loaded).
func matcherHosts(sets caddyhttp.MatcherSets) []string {
	var hosts []string
	for _, set := range sets {
		for _, m := range set {
			switch v := m.(type) {
			case *caddyhttp.MatchHost:
				hosts = append(hosts, *v...)
			case caddyhttp.MatchHost:
				hosts = append(hosts, v...)
			}
		}
	}
	return hosts
}

// agentSiteRequest finds the http server and route holding h in the http
// app and returns the stand-in request of its site (nil when not found).
func agentSiteRequest(ctx caddy.Context, h *AgentHandler) *http.Request {
	httpApp, err := ctx.AppIfConfigured("http")
	if err != nil || httpApp == nil {
		return nil
	}
	app, ok := httpApp.(*caddyhttp.App)
	if !ok {
		return nil
	}
	var walk func(routes caddyhttp.RouteList, hosts []string, depth int) ([]string, bool)
	walk = func(routes caddyhttp.RouteList, hosts []string, depth int) ([]string, bool) {
		if depth > maxRouteDepth {
			return nil, false
		}
		for _, rt := range routes {
			hs := hosts
			if more := matcherHosts(rt.MatcherSets); len(more) > 0 {
				hs = more
			}
			for _, hd := range rt.Handlers {
				switch v := hd.(type) {
				case *AgentHandler:
					if v == h {
						return hs, true
					}
				case *caddyhttp.Subroute:
					if found, ok := walk(v.Routes, hs, depth+1); ok {
						return found, true
					}
				}
			}
		}
		return nil, false
	}
	for _, name := range sortedServerNames(app) {
		srv := app.Servers[name]
		if hosts, ok := walk(srv.Routes, nil, 0); ok {
			return siteRequest(srv.Listen, hosts, serverTLS(srv))
		}
	}
	return nil
}
