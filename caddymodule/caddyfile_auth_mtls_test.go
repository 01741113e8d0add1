package caddymodule

import (
	"testing"
)

// AUTH-9: the mtls block of auth, and its refusals.
func TestUnmarshalAuthMTLS(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\nno_env\nmtls {\nprincipal_from cn\nprincipal svc svc.internal\nprincipal bot bot.internal\n}\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	m := hs.auth.Config.MTLS
	if m == nil || m.PrincipalFrom != "cn" || len(m.Principals) != 2 || m.Principals[1].Name != "bot" || m.Principals[1].Identity != "bot.internal" {
		t.Fatalf("mtls %+v", m)
	}
	if s := securityOf(hs.auth); s == nil || !s.MTLS {
		t.Fatalf("security %+v, want mtls declared", s)
	}
	for _, bad := range []string{"mtls on {\n}", "mtls {\nprincipal svc\n}", "mtls {\nnope x\n}", "mtls {\n}\nmtls {\n}"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\n"+bad+"\n}\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// AUTH-9: require_with_bearer in the mtls block sets the AND requirement
// and reaches the card's security declaration; it takes no argument.
func TestUnmarshalAuthMTLSRequireWithBearer(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\nno_env\ntoken tok-0123456789abcdef\nmtls {\nrequire_with_bearer\n}\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if m := hs.auth.Config.MTLS; m == nil || !m.RequireWithBearer {
		t.Fatalf("mtls %+v", m)
	}
	if s := securityOf(hs.auth); s == nil || !s.MTLS || !s.MTLSWithBearer || !s.Bearer {
		t.Fatalf("security %+v, want mtls with bearer declared", s)
	}
	if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nauth {\nmtls {\nrequire_with_bearer yes\n}\n}\n}"); err == nil {
		t.Error("require_with_bearer with an argument accepted")
	}
}
