package auth

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"
)

// mtlsState is a connection state whose verified chain's leaf has the
// given identities (verified false: the certificate was only presented).
func mtlsState(verified bool, uri, dns, email, cn string) *tls.ConnectionState {
	c := &x509.Certificate{Subject: pkix.Name{CommonName: cn}, NotAfter: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
	if uri != "" {
		u, _ := url.Parse(uri)
		c.URIs = []*url.URL{u}
	}
	if dns != "" {
		c.DNSNames = []string{dns}
	}
	if email != "" {
		c.EmailAddresses = []string{email}
	}
	cs := &tls.ConnectionState{PeerCertificates: []*x509.Certificate{c}}
	if verified {
		cs.VerifiedChains = [][]*x509.Certificate{{c}}
	}
	return cs
}

// AUTH-9: the identity comes from the configured field of a verified
// leaf only; a mapping admits only its identities; without one the
// identity is the name unless it names another configured principal; a
// header credential is never rescued by a certificate.
func TestMTLSPrincipal(t *testing.T) {
	cs := mtlsState(true, "spiffe://example.org/svc", "svc.example.org", "svc@example.org", "svc-cn")
	for from, want := range map[string]string{"": "spiffe://example.org/svc", "san_uri": "spiffe://example.org/svc",
		"san_dns": "svc.example.org", "email": "svc@example.org", "cn": "svc-cn"} {
		a, _, err := New(Config{NoEnv: true, MTLS: &MTLS{PrincipalFrom: from}}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r := httptest.NewRequest("POST", "https://a.example/", nil)
		r.TLS = cs
		if res, ok := a.Check(r); !ok || res.Principal != want || !res.Expires.Equal(cs.VerifiedChains[0][0].NotAfter) {
			t.Errorf("principal_from %q: %q %v (expires %v), want %q until the certificate's notAfter", from, res.Principal, ok, res.Expires, want)
		}
	}
	a, _, err := New(Config{NoEnv: true, Token: "tok-0123456789abcdef", Principals: []Principal{{Name: "admin", Token: "adm-0123456789abcdef"}},
		MTLS: &MTLS{PrincipalFrom: "cn", Principals: []MTLSPrincipal{{Name: "svc", Identity: "svc-cn"}}}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Enabled() || !a.Schemes().MTLS {
		t.Fatal("mtls does not enable auth")
	}
	check := func(cs *tls.ConnectionState, authz string) (string, bool) {
		r := httptest.NewRequest("POST", "https://a.example/", nil)
		r.TLS = cs
		if authz != "" {
			r.Header.Set("Authorization", authz)
		}
		res, ok := a.Check(r)
		return res.Principal, ok
	}
	if p, ok := check(mtlsState(true, "", "", "", "svc-cn"), ""); !ok || p != "svc" {
		t.Errorf("mapped identity: %q %v", p, ok)
	}
	for name, cs := range map[string]*tls.ConnectionState{
		"unmapped":   mtlsState(true, "", "", "", "other"),
		"unverified": mtlsState(false, "", "", "", "svc-cn"),
		"empty cn":   mtlsState(true, "", "", "", ""),
		"no TLS":     nil,
	} {
		if p, ok := check(cs, ""); ok {
			t.Errorf("%s: accepted as %q", name, p)
		}
	}
	if _, ok := check(mtlsState(true, "", "", "", "svc-cn"), "Bearer wrong-token-0123456789"); ok {
		t.Error("a wrong bearer token was rescued by the certificate")
	}
	if p, ok := check(mtlsState(true, "", "", "", "svc-cn"), "Bearer tok-0123456789abcdef"); !ok || p != "default" {
		t.Errorf("a right bearer token with a certificate: %q %v", p, ok)
	}
	// Without a mapping, a certificate naming a configured principal does
	// not become it.
	a, _, _ = New(Config{NoEnv: true, Principals: []Principal{{Name: "admin", Token: "adm-0123456789abcdef"}}, MTLS: &MTLS{PrincipalFrom: "cn"}}, Options{})
	r := httptest.NewRequest("POST", "https://a.example/", nil)
	r.TLS = mtlsState(true, "", "", "", "admin")
	if res, ok := a.Check(r); ok {
		t.Errorf("a certificate with CN admin became %q", res.Principal)
	}
	for _, bad := range []*MTLS{{PrincipalFrom: "serial"}, {Principals: []MTLSPrincipal{{Name: "x"}}},
		{Principals: []MTLSPrincipal{{Name: "x", Identity: "i"}, {Name: "y", Identity: "i"}}}} {
		if _, _, err := New(Config{NoEnv: true, MTLS: bad}, Options{}); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}
