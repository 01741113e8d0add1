package push

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeResolver answers from a table; a name with two answers returns the
// first on the first lookup and the second afterwards (DNS rebinding).
type fakeResolver struct {
	answers map[string][][]string
	calls   map[string]*atomic.Int64
}

func newFakeResolver(m map[string][][]string) *fakeResolver {
	f := &fakeResolver{answers: m, calls: map[string]*atomic.Int64{}}
	for k := range m {
		f.calls[k] = new(atomic.Int64)
	}
	return f
}

func (f *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	as, ok := f.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := int(f.calls[host].Add(1)) - 1
	if i >= len(as) {
		i = len(as) - 1
	}
	var out []netip.Addr
	for _, s := range as[i] {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// TestPolicyTable covers PUSH-2: scheme, names, IP spellings and ranges,
// resolver answers, and the allow-list.
func TestPolicyTable(t *testing.T) {
	res := newFakeResolver(map[string][][]string{
		"public.example":    {{"93.184.216.34"}},
		"public6.example":   {{"2606:2800:220:1:248:1893:25c8:1946"}},
		"loop.example":      {{"127.0.0.1"}},
		"mixed.example":     {{"93.184.216.34", "10.0.0.5"}},
		"meta.example":      {{"169.254.169.254"}},
		"private6.example":  {{"fd00::1"}},
		"mapped.example":    {{"::ffff:127.0.0.1"}},
		"cgnat.example":     {{"100.64.1.1"}},
		"zero.example":      {{"0.0.0.0"}},
		"rebind.example":    {{"93.184.216.34"}, {"127.0.0.1"}},
		"intranet.example":  {{"10.1.2.3"}},
		"nat64pub.example":  {{"64:ff9b::5db8:d822"}},
		"nat64priv.example": {{"64:ff9b::a00:1"}},
	})
	strict := &Policy{Resolver: res}
	allow := &Policy{Resolver: res, Allow: mustPrefixes("10.0.0.0/8", "127.0.0.0/8")}
	cases := []urlCase{
		{"https://public.example/hook", strict, true},
		{"http://public.example:8080/hook?x=1", strict, true},
		{"https://public6.example/", strict, true},
		{"https://93.184.216.34/", strict, true},
		{"https://[2606:2800:220:1:248:1893:25c8:1946]/", strict, true},
		{"https://nat64pub.example/", strict, true},
		{"", strict, false},
		{"ftp://public.example/", strict, false},
		{"file:///etc/passwd", strict, false},
		{"gopher://public.example/", strict, false},
		{"//public.example/hook", strict, false},
		{"/relative", strict, false},
		{"https://user:pw@public.example/", strict, false},
		{"http://localhost/", strict, false},
		{"http://LOCALHOST./", strict, false},
		{"http://api.localhost/", strict, false},
		{"http://127.0.0.1/", strict, false},
		{"http://127.1.2.3:9000/", strict, false},
		{"http://2130706433/", strict, false},   // decimal 127.0.0.1
		{"http://0177.0.0.1/", strict, false},   // octal
		{"http://0x7f.0.0.1/", strict, false},   // hex
		{"http://0x7f000001/", strict, false},   // hex whole
		{"http://127.1/", strict, false},        // short form
		{"http://017700000001/", strict, false}, // octal whole
		{"http://10.0.0.1/", strict, false},
		{"http://172.16.5.4/", strict, false},
		{"http://172.31.255.255/", strict, false},
		{"http://192.168.1.1/", strict, false},
		{"http://169.254.169.254/latest/meta-data", strict, false},
		{"http://100.64.0.1/", strict, false},
		{"http://100.127.255.254/", strict, false},
		{"http://0.0.0.0/", strict, false},
		{"http://224.0.0.1/", strict, false},
		{"http://255.255.255.255/", strict, false},
		{"http://198.18.0.1/", strict, false},
		{"http://[::1]/", strict, false},
		{"http://[::]/", strict, false},
		{"http://[::ffff:127.0.0.1]/", strict, false},
		{"http://[::ffff:7f00:1]/", strict, false},
		{"http://[::ffff:93.184.216.34]/", strict, false}, // mapped: refused outright
		{"http://[::127.0.0.1]/", strict, false},          // IPv4-compatible
		{"http://[fe80::1%25eth0]/", strict, false},
		{"http://[fe80::1]/", strict, false},
		{"http://[fc00::1]/", strict, false},
		{"http://[fd12:3456::1]/", strict, false},
		{"http://[ff02::1]/", strict, false},
		{"http://[2001:db8::1]/", strict, false},
		{"http://[64:ff9b::a00:1]/", strict, false}, // NAT64 of 10.0.0.1
		{"http://[2002:a00:1::1]/", strict, false},  // 6to4 of 10.0.0.1
		{"http://loop.example/", strict, false},
		{"http://mixed.example/", strict, false},
		{"http://meta.example/", strict, false},
		{"http://private6.example/", strict, false},
		{"http://mapped.example/", strict, false},
		{"http://cgnat.example/", strict, false},
		{"http://zero.example/", strict, false},
		{"http://nat64priv.example/", strict, false},
		{"http://unknown.example/", strict, true}, // does not resolve now: dial time decides
		{"http://public.example:0/", strict, false},
		{"http://public.example:99999/", strict, false},
		{"http://127.0.0.1:8080/", allow, true},
		{"http://10.9.8.7/", allow, true},
		{"http://intranet.example/", allow, true},
		{"http://[::ffff:127.0.0.1]/", allow, true},
		{"http://192.168.1.1/", allow, false},
		{"http://localhost/", allow, false},
	}
	if len(cases) < 40 {
		t.Fatalf("want at least 40 cases, have %d", len(cases))
	}
	checkURLCases(t, cases)
}

// TestPolicyDialRebinding: the name passes the store-time check with a
// public answer, then resolves to 127.0.0.1 when dialled; the dial is
// refused before any connection is made.
func TestPolicyDialRebinding(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	res := newFakeResolver(map[string][][]string{"rebind.example": {{"93.184.216.34"}, {"127.0.0.1"}}})
	p := &Policy{Resolver: res}
	if err := p.CheckURL(t.Context(), "http://rebind.example:"+port+"/"); err != nil {
		t.Fatalf("first answer is public, check should pass: %v", err)
	}
	s := NewSender(p, 0)
	r := s.Send(t.Context(), Delivery{ID: "d1", URL: "http://rebind.example:" + port + "/", Body: []byte("{}"), Attempt: 1})
	if r.Outcome != Failed || hits.Load() != 0 {
		t.Fatalf("rebinding dial: outcome %v reason %q, receiver hits %d", r.Outcome, r.Reason, hits.Load())
	}
	// The dialler's Control hook checks the connected address itself.
	if err := p.control("tcp4", "127.0.0.1:80", nil); !errors.Is(err, ErrBlocked) {
		t.Fatalf("control on loopback: %v", err)
	}
	if err := p.control("tcp6", "[::ffff:10.0.0.1]:80", nil); !errors.Is(err, ErrBlocked) {
		t.Fatalf("control on mapped private: %v", err)
	}
	if err := p.control("tcp4", "93.184.216.34:443", nil); err != nil {
		t.Fatalf("control on public: %v", err)
	}
}

// TestPolicyNoRedirects: a 302 to another host is not followed; it is a
// non-retryable failure.
func TestPolicyNoRedirects(t *testing.T) {
	var followed atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { followed.Add(1) }))
	defer target.Close()
	redir := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/stolen", http.StatusFound)
	}))
	defer redir.Close()
	s := NewSender(&Policy{Allow: mustPrefixes("127.0.0.0/8")}, 0)
	r := s.Send(t.Context(), Delivery{ID: "d", URL: redir.URL, Token: "secret", Body: []byte("{}"), Attempt: 1})
	if r.Outcome != Failed || r.Status != http.StatusFound || followed.Load() != 0 {
		t.Fatalf("redirect: %+v, followed %d", r, followed.Load())
	}
	if strings.Contains(r.Reason, "secret") {
		t.Fatalf("reason leaks the token: %q", r.Reason)
	}
}

func TestParseCIDRs(t *testing.T) {
	ps, err := ParseCIDRs("127.0.0.0/8, 10.0.0.0/8", "::1", "")
	if err != nil || len(ps) != 3 || ps[2].Bits() != 128 {
		t.Fatalf("ParseCIDRs: %v %v", ps, err)
	}
	if _, err := ParseCIDRs("nope"); err == nil {
		t.Fatal("ParseCIDRs accepted garbage")
	}
}

// urlCase is a push URL, the policy that checks it and whether it passes.
type urlCase struct {
	url    string
	policy *Policy
	ok     bool
}

// checkURLCases checks each case with its policy's CheckURL: it passes
// exactly when ok says, and a refusal wraps ErrBlocked.
func checkURLCases(t *testing.T, cases []urlCase) {
	t.Helper()
	for _, tc := range cases {
		err := tc.policy.CheckURL(t.Context(), tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%q) error %v does not wrap ErrBlocked", tc.url, err)
		}
	}
}
