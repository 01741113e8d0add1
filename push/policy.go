// Package push delivers A2A push notifications (PUSH-1…PUSH-8):
// the callback URL policy and SSRF-safe dialer, the key ring that encrypts
// notification secrets at rest, the HTTP sender, the retry policy, the queue
// interface with its two implementations (the SQLite outbox of package
// agent/store and Redis Streams), the worker pool, and Config, the
// operator's settings with their one set of rules. It imports nothing from
// Caddy.
package push

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ReasonURL is the fixed description of an InvalidParamsError for a
// callback URL that is empty or rejected by the policy (PUSH-1). It never
// says which rule matched, so the policy cannot be probed.
const ReasonURL = "must be an absolute http or https URL whose host is a public address"

// ErrBlocked is wrapped by every policy refusal.
var ErrBlocked = errors.New("push callback address not allowed")

// Resolver looks up the addresses of a host name. *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy decides which callback URLs and addresses may be used (PUSH-2).
// The zero value blocks every non-public address and resolves names with
// net.DefaultResolver.
type Policy struct {
	// Allow lists networks that are allowed even though they are not public
	// (intranets, tests). Empty by default.
	Allow []netip.Prefix
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// ParseCIDRs parses CIDRs (or bare IPs, taken as /32 or /128) separated by
// spaces or commas, as in `allow_private_networks {$A2A_PUSH_ALLOW_CIDRS}`.
func ParseCIDRs(items ...string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, it := range items {
		for _, f := range strings.FieldsFunc(it, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
			if p, err := netip.ParsePrefix(f); err == nil {
				out = append(out, p.Masked())
				continue
			}
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, fmt.Errorf("%q is not a CIDR or IP address", f)
			}
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out, nil
}

func (p *Policy) resolver() Resolver {
	if p == nil || p.Resolver == nil {
		return net.DefaultResolver
	}
	return p.Resolver
}

// lookup resolves host and unmaps every IPv4-mapped IPv6 answer
// (::ffff:a.b.c.d) to its IPv4 address, so the answer is checked as the
// address that is dialled: Go's resolver returns the mapped form for some
// hosts-file entries (Docker --add-host, Kubernetes hostAliases). A mapped
// literal written in a URL is not resolved and stays refused (PUSH-2).
func (p *Policy) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	addrs, err := p.resolver().LookupNetIP(ctx, "ip", host)
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, err
}

// allowed reports whether a is explicitly allowed.
func (p *Policy) allowed(a netip.Addr) bool {
	if p == nil {
		return false
	}
	for _, pr := range p.Allow {
		if pr.Contains(a) || (a.Is4In6() && pr.Contains(a.Unmap())) {
			return true
		}
	}
	return false
}

// CheckAddr returns nil when a may be dialled: it is public, or it is in
// the allow-list.
func (p *Policy) CheckAddr(a netip.Addr) error {
	a = a.WithZone("")
	if p.allowed(a) {
		return nil
	}
	if !publicAddr(a) {
		return ErrBlocked
	}
	return nil
}

var blocked4 = mustPrefixes(
	"0.0.0.0/8",          // this network, unspecified
	"10.0.0.0/8",         // private
	"100.64.0.0/10",      // CGNAT shared address space
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link-local, cloud metadata
	"172.16.0.0/12",      // private
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // TEST-NET-1
	"192.88.99.0/24",     // 6to4 relay anycast
	"192.168.0.0/16",     // private
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // TEST-NET-2
	"203.0.113.0/24",     // TEST-NET-3
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved, broadcast
	"255.255.255.255/32", // broadcast
)

var blocked6 = mustPrefixes(
	"::/96",         // unspecified, loopback, IPv4-compatible
	"::ffff:0:0/96", // IPv4-mapped (blocked outright: dial the IPv4 address instead)
	"::ffff:0:0:0/96",
	"100::/64",      // discard
	"2001::/32",     // Teredo (embeds an arbitrary IPv4)
	"2001:db8::/32", // documentation
	"2001:10::/28",  // ORCHID
	"fc00::/7",      // unique local
	"fe80::/10",     // link-local
	"fec0::/10",     // site-local (deprecated)
	"ff00::/8",      // multicast
)

// Prefixes whose addresses embed an IPv4 address: allowed only when the
// embedded address is public.
var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	nat64l  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFr = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// publicAddr reports whether a is a globally routable unicast address.
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	if a.Is4() {
		for _, p := range blocked4 {
			if p.Contains(a) {
				return false
			}
		}
		return true
	}
	for _, p := range blocked6 {
		if p.Contains(a) {
			return false
		}
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}))
	case nat64l.Contains(a):
		return false
	case sixToFr.Contains(a):
		return publicAddr(netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}))
	}
	return a.IsGlobalUnicast()
}

// ParseURL checks the shape of a callback URL without any lookup: http or
// https, a host, no user info, no `localhost` name, no numeric host other
// than a canonical IP literal, and an IP literal must pass CheckAddr.
func (p *Policy) ParseURL(raw string) (*url.URL, error) {
	if raw == "" || len(raw) > 2048 {
		return nil, ErrBlocked
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, ErrBlocked
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, ErrBlocked
	}
	if u.User != nil {
		return nil, ErrBlocked
	}
	host := u.Hostname()
	if host == "" {
		return nil, ErrBlocked
	}
	if port := u.Port(); port != "" {
		if n, err := parsePort(port); err != nil || n == 0 {
			return nil, ErrBlocked
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckAddr(a); err != nil {
			return nil, err
		}
		return u, nil
	}
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		return nil, ErrBlocked
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") || h == "localhost.localdomain" {
		return nil, ErrBlocked
	}
	// A numeric last label is an IPv4 address in a non-canonical spelling
	// (2130706433, 0177.0.0.1, 0x7f.1, 127.1) that some resolvers accept;
	// top-level domains are never numeric.
	labels := strings.Split(h, ".")
	last := labels[len(labels)-1]
	if numericLabel(last) {
		return nil, ErrBlocked
	}
	return u, nil
}

func numericLabel(s string) bool {
	if s == "" {
		return false
	}
	if strings.HasPrefix(s, "0x") {
		return true
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func parsePort(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, ErrBlocked
		}
		n = n*10 + int(c-'0')
		if n > 65535 {
			return 0, ErrBlocked
		}
	}
	return n, nil
}

// CheckURL is the check done when a config is stored: ParseURL, then every
// address the host resolves to must pass CheckAddr. A name that does not
// resolve now (no such host, server failure, DNS unreachable or slow) is
// accepted: the receiver may not be published yet, and DialContext checks
// the addresses actually dialled before every send (PUSH-2). It never says
// which rule failed; callers answer with ReasonURL.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := p.ParseURL(raw)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	// A lookup error leaves no answer to check; the addresses of a partial
	// answer are still checked.
	addrs, _ := p.lookup(lctx, host)
	for _, a := range addrs {
		if err := p.CheckAddr(a); err != nil {
			return err
		}
	}
	return nil
}

// DialContext connects to addr ("host:port") the way a callback must be
// reached: the host is resolved, every address is checked, and the dialler's
// Control hook checks again the address actually connected to, so a name
// that changes its answer between the check and the dial (DNS rebinding)
// is refused.
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = p.lookup(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("resolving callback host: %w", err)
		}
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Control: p.control}
	var firstErr error
	for _, a := range addrs {
		if err := p.CheckAddr(a); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr == nil {
		firstErr = fmt.Errorf("%w: no address", ErrBlocked)
	}
	return nil, firstErr
}

// control runs just before connect(2) with the numeric address.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return ErrBlocked
	}
	return p.CheckAddr(ap.Addr())
}
