package push

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a tiny authoritative DNS responder on UDP loopback: names in
// a answer with their IPv4/IPv6 addresses, names in rcode with that code
// (NXDOMAIN, SERVFAIL), every other name NXDOMAIN.
type dnsServer struct {
	conn    net.PacketConn
	answers map[string][]netip.Addr
	rcode   map[string]dnsmessage.RCode
	queries atomic.Int64
}

func startDNS(t *testing.T, answers map[string][]netip.Addr, rcode map[string]dnsmessage.RCode) *dnsServer {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: c, answers: answers, rcode: rcode}
	t.Cleanup(func() { c.Close() })
	go s.serve()
	return s
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		s.queries.Add(1)
		name := q.Name.String()
		rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
		addrs, known := s.answers[name]
		if rc, ok := s.rcode[name]; ok {
			rh.RCode = rc
		} else if !known {
			rh.RCode = dnsmessage.RCodeNameError
		}
		b := dnsmessage.NewBuilder(nil, rh)
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		rrh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
		for _, a := range addrs {
			switch {
			case q.Type == dnsmessage.TypeA && a.Is4():
				_ = b.AResource(rrh, dnsmessage.AResource{A: a.As4()})
			case q.Type == dnsmessage.TypeAAAA && a.Is6():
				_ = b.AAAAResource(rrh, dnsmessage.AAAAResource{AAAA: a.As16()})
			}
		}
		out, err := b.Finish()
		if err != nil {
			continue
		}
		_, _ = s.conn.WriteTo(out, from)
	}
}

// resolver is a pure-Go net.Resolver whose every query goes to s.
func (s *dnsServer) resolver() *net.Resolver {
	addr := s.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// TestCheckURLUnresolvedAccepted covers PUSH-2 at store time over real DNS
// answers: a name that does not resolve now (NXDOMAIN, SERVFAIL, DNS
// unreachable) is accepted; a name resolving to a blocked address is
// rejected, as are literal blocked IPs and localhost names, whatever DNS
// says. The dial-time check still refuses the blocked answer.
func TestCheckURLUnresolvedAccepted(t *testing.T) {
	dns := startDNS(t, map[string][]netip.Addr{
		"public.hook.test.":  {netip.MustParseAddr("93.184.216.34")},
		"private.hook.test.": {netip.MustParseAddr("10.1.2.3")},
		"mixed.hook.test.":   {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("fd00::1")},
		"loop6.hook.test.":   {netip.MustParseAddr("::1")},
	}, map[string]dnsmessage.RCode{
		"servfail.hook.test.": dnsmessage.RCodeServerFailure,
	})
	p := &Policy{Resolver: dns.resolver()}
	offline := &Policy{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("network is unreachable")
	}}}
	cases := []urlCase{
		{"https://public.hook.test/hook", p, true},
		{"https://nxdomain.hook.test/hook", p, true},
		{"https://servfail.hook.test/hook", p, true},
		{"https://example.com/hook", offline, true},
		{"https://private.hook.test/hook", p, false},
		{"https://mixed.hook.test/hook", p, false},
		{"https://loop6.hook.test/hook", p, false},
		{"http://10.0.0.1/hook", p, false},
		{"http://127.0.0.1/hook", offline, false},
		{"http://[::1]/hook", offline, false},
		{"http://localhost/hook", offline, false},
		{"http://api.localhost/hook", p, false},
		{"http://2130706433/hook", offline, false},
	}
	checkURLCases(t, cases)
	if dns.queries.Load() == 0 {
		t.Fatal("the test DNS server was never asked")
	}
	// Dial time governs the send: the blocked answer is refused, and a name
	// that still does not resolve fails to dial.
	if _, err := p.DialContext(t.Context(), "tcp", "private.hook.test:443"); !errors.Is(err, ErrBlocked) {
		t.Fatalf("dial private answer: %v", err)
	}
	if c, err := p.DialContext(t.Context(), "tcp", "nxdomain.hook.test:443"); err == nil {
		c.Close()
		t.Fatal("dial of a name that does not resolve succeeded")
	}
}
