package caddymodule

import (
	"net/netip"
	"sort"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
)

// warnNoAuth logs one warning per listener address of an HTTP server that
// serves an a2a handler with no authentication before it and listens
// beyond loopback (AUTH-6): anyone who can reach the address may run
// turns. ctx is the a2a app's context; the http app is read, not loaded.
func warnNoAuth(ctx caddy.Context, logger *zap.Logger) {
	if logger == nil {
		return
	}
	httpApp, err := ctx.AppIfConfigured("http")
	if err != nil || httpApp == nil {
		return
	}
	app, ok := httpApp.(*caddyhttp.App)
	if !ok {
		return
	}
	repl := caddy.NewReplacer()
	warned := map[string]bool{}
	names := make([]string, 0, len(app.Servers))
	for name := range app.Servers {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		srv := app.Servers[name]
		if srv == nil || !unauthenticatedAgent(srv.Routes, false) {
			continue
		}
		for _, l := range srv.Listen {
			addr := repl.ReplaceAll(l, "")
			if warned[addr] || loopbackListener(addr) {
				continue
			}
			warned[addr] = true
			logger.Warn("the gateway listens on a non-loopback address and no `auth` is configured: anyone who can reach it may use the agent; add an auth block (or bind 127.0.0.1)",
				zap.String("listen", addr))
		}
	}
}

// unauthenticatedAgent reports whether routes hold an a2a handler that no
// enabled a2a_auth handler precedes in its handler chain (authed says one
// already did, in an enclosing route).
func unauthenticatedAgent(routes caddyhttp.RouteList, authed bool) bool {
	for _, rt := range routes {
		on := authed
		for _, h := range rt.Handlers {
			switch v := h.(type) {
			case *AuthHandler:
				if v.authn.Enabled() {
					on = true
				}
			case *AgentHandler:
				if !on {
					return true
				}
			case *caddyhttp.Subroute:
				if unauthenticatedAgent(v.Routes, on) {
					return true
				}
			}
		}
	}
	return false
}

// loopbackListener reports whether a Caddy listener address only accepts
// local connections: a loopback IP or localhost, a unix socket or an
// inherited file descriptor. An empty host is every interface.
func loopbackListener(addr string) bool {
	na, err := caddy.ParseNetworkAddress(addr)
	if err != nil {
		return false
	}
	if na.IsUnixNetwork() || na.IsFdNetwork() {
		return true
	}
	host := strings.Trim(na.Host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
