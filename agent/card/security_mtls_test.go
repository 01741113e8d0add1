package card

import (
	"encoding/json"
	"strings"
	"testing"
)

// AUTH-9: mtlsAuth is its own alternative, or — with require_with_bearer —
// part of every bearer-type requirement (one entry naming both, an AND).
func TestBuildMTLSRequirements(t *testing.T) {
	for _, c := range []struct {
		name string
		rt   Runtime
		want []string
		not  []string
	}{
		{"alternative", Runtime{BaseURL: "http://h:1/", Bearer: true, MTLS: true},
			[]string{`"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]}}},{"schemes":{"mtlsAuth":{"list":[]}}}]`}, nil},
		{"and", Runtime{BaseURL: "http://h:1/", Bearer: true, MTLS: true, MTLSWithBearer: true},
			[]string{`"securityRequirements":[{"schemes":{"bearerAuth":{"list":[]},"mtlsAuth":{"list":[]}}}]`, `"mtlsAuth":{"mtlsSecurityScheme"`}, nil},
		{"and with openid", Runtime{BaseURL: "http://h:1/", Bearer: true, BearerJWT: true, MTLS: true, MTLSWithBearer: true, OpenIDConnectURL: "https://idp/.well-known/openid-configuration"},
			[]string{`{"schemes":{"bearerAuth":{"list":[]},"mtlsAuth":{"list":[]}}}`, `{"schemes":{"mtlsAuth":{"list":[]},"openIdConnect":{"list":[]}}}`},
			[]string{`{"schemes":{"mtlsAuth":{"list":[]}}}`}},
	} {
		b, _ := json.Marshal(Build(validConfig(), c.rt))
		s := string(b)
		for _, w := range c.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: card lacks %s\n%s", c.name, w, s)
			}
		}
		for _, w := range c.not {
			if strings.Contains(s, w) {
				t.Errorf("%s: card has %s\n%s", c.name, w, s)
			}
		}
	}
	// A skill's scope requirements carry the certificate too.
	cfg := validConfig()
	cfg.Skills[0].RequiresScopes = []string{"deploy:write"}
	b, _ := json.Marshal(Build(cfg, Runtime{BaseURL: "http://h:1/", Bearer: true, BearerJWT: true, MTLS: true, MTLSWithBearer: true}))
	if want := `"securityRequirements":[{"schemes":{"bearerAuth":{"list":["deploy:write"]},"mtlsAuth":{"list":[]}}}]`; !strings.Contains(string(b), want) {
		t.Errorf("skill lacks %s\n%s", want, b)
	}
	if s := (&Security{MTLS: true, MTLSWithBearer: true, Bearer: true}).Schemes(); !s.MTLSWithBearer {
		t.Errorf("Security.Schemes drops MTLSWithBearer: %+v", s)
	}
}
