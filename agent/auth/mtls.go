package auth

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"
)

// Where MTLS.PrincipalFrom reads a client certificate's identity.
const (
	// MTLSFromSANURI is the first URI subject alternative name (a SPIFFE
	// ID such as spiffe://example.org/ns/prod/sa/billing).
	MTLSFromSANURI = "san_uri"
	// MTLSFromSANDNS is the first DNS subject alternative name.
	MTLSFromSANDNS = "san_dns"
	// MTLSFromEmail is the first email subject alternative name.
	MTLSFromEmail = "email"
	// MTLSFromCN is the subject common name.
	MTLSFromCN = "cn"
)

// MTLS maps the verified client certificate of a TLS connection to a
// principal (AUTH-9). It relies on the TLS server having verified the
// certificate chain against its trust pool (Caddy's `tls { client_auth {
// mode require_and_verify; trust_pool … } }`): only a chain the server
// verified counts (tls.ConnectionState.VerifiedChains), so a certificate
// merely presented (client_auth mode request or require) is never a
// credential. An expired certificate or one from another CA fails the TLS
// handshake before any request.
type MTLS struct {
	// PrincipalFrom says which field of the leaf certificate is its
	// identity: san_uri, san_dns, email or cn. Default: san_uri.
	PrincipalFrom string `json:"principal_from,omitempty"`
	// Principals map identities to principal names. When set, only the
	// listed identities are accepted; when empty, the identity itself is
	// the principal name (unless it names a principal configured with
	// another credential, which is refused).
	Principals []MTLSPrincipal `json:"principals,omitempty"`
	// RequireWithBearer makes the certificate a second factor instead of a
	// credential of its own (AUTH-9, the AND requirement): every request
	// needs both a verified client certificate these rules accept AND a
	// valid bearer credential (a static token or a JWT). The principal is
	// the bearer's — the token says who is calling (and carries the scopes
	// and claims limits select on); the certificate says from which
	// workload. Basic and API key credentials cannot be combined with it.
	RequireWithBearer bool `json:"require_with_bearer,omitempty"`
}

// MTLSPrincipal maps one certificate identity to a principal name.
type MTLSPrincipal struct {
	// Name is the principal name.
	Name string `json:"name"`
	// Identity is the certificate identity (the value of the
	// PrincipalFrom field), compared exactly.
	Identity string `json:"identity"`
}

// mtlsMapper is a validated MTLS.
type mtlsMapper struct {
	from       string
	names      map[string]string // identity → principal; nil: the identity is the name
	withBearer bool              // RequireWithBearer
}

// newMTLSMapper validates m.
func newMTLSMapper(m *MTLS) (*mtlsMapper, error) {
	from := m.PrincipalFrom
	if from == "" {
		from = MTLSFromSANURI
	}
	if !slices.Contains([]string{MTLSFromSANURI, MTLSFromSANDNS, MTLSFromEmail, MTLSFromCN}, from) {
		return nil, fmt.Errorf("mtls: principal_from must be san_uri, san_dns, email or cn, not %q", from)
	}
	mm := &mtlsMapper{from: from, withBearer: m.RequireWithBearer}
	for i, p := range m.Principals {
		if p.Name == "" || p.Identity == "" {
			return nil, fmt.Errorf("mtls: principal %d needs a name and an identity", i)
		}
		if mm.names == nil {
			mm.names = map[string]string{}
		}
		if _, dup := mm.names[p.Identity]; dup {
			return nil, errors.New("mtls: an identity is mapped twice")
		}
		mm.names[p.Identity] = p.Name
	}
	return mm, nil
}

// identity is the identity of a leaf certificate ("" when its field is
// empty).
func (m *mtlsMapper) identity(c *x509.Certificate) string {
	switch m.from {
	case MTLSFromSANURI:
		if len(c.URIs) > 0 {
			return c.URIs[0].String()
		}
	case MTLSFromSANDNS:
		if len(c.DNSNames) > 0 {
			return c.DNSNames[0]
		}
	case MTLSFromEmail:
		if len(c.EmailAddresses) > 0 {
			return c.EmailAddresses[0]
		}
	case MTLSFromCN:
		return c.Subject.CommonName
	}
	return ""
}

// principal maps the connection's verified client certificate to a
// principal and the certificate's expiry; false when there is none, its
// identity field is empty, or the identity is not mapped (with a mapping)
// or names one of others (without one).
func (m *mtlsMapper) principal(cs *tls.ConnectionState, others []string) (string, time.Time, bool) {
	if m == nil || cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", time.Time{}, false
	}
	leaf := cs.VerifiedChains[0][0]
	id := m.identity(leaf)
	if id == "" {
		return "", time.Time{}, false
	}
	if m.names != nil {
		p, ok := m.names[id]
		return p, leaf.NotAfter, ok
	}
	if slices.Contains(others, id) {
		return "", time.Time{}, false // a certificate must not take over a configured principal (AUTH-4)
	}
	return id, leaf.NotAfter, true
}

// checkMTLS is the principal of r's verified client certificate, and when
// the certificate expires (AUTH-10: a long-lived connection opened with
// it ends then), when mTLS is on and r carries no other credential (a
// wrong header credential is not rescued by a certificate).
func (a *Authenticator) checkMTLS(r *http.Request) (string, time.Time, bool) {
	if a.mtls == nil || r.Header.Get("Authorization") != "" || (a.header != "" && r.Header.Get(a.header) != "") {
		return "", time.Time{}, false
	}
	return a.mtls.principal(r.TLS, a.principals)
}
