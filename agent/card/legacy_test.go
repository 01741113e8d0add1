package card

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestBuildDualCard (RPC-2): with LegacyV03 the card keeps every 1.0
// member and adds the 0.3 ones; without it none is present.
func TestBuildDualCard(t *testing.T) {
	rt := Runtime{BaseURL: "https://agent.example/", Bearer: true}
	plain := Build(validConfig(), rt)
	if plain.URL != "" || plain.ProtocolVersion != "" || plain.AdditionalInterfaces != nil || len(plain.SupportedInterfaces) != 2 {
		t.Fatalf("card without legacy_v03 has 0.3 members: %+v", plain)
	}
	rt.LegacyV03 = true
	c := Build(validConfig(), rt)
	if c.URL != "https://agent.example/" || c.PreferredTransport != a2a.BindingJSONRPC || c.ProtocolVersion != "0.3.0" {
		t.Errorf("0.3 members: url %q transport %q version %q", c.URL, c.PreferredTransport, c.ProtocolVersion)
	}
	if len(c.AdditionalInterfaces) != 1 || c.AdditionalInterfaces[0].Transport != a2a.BindingJSONRPC {
		t.Errorf("additionalInterfaces %+v", c.AdditionalInterfaces)
	}
	if c.SupportsAuthenticatedExtendedCard == nil || !*c.SupportsAuthenticatedExtendedCard {
		t.Error("supportsAuthenticatedExtendedCard missing with auth on")
	}
	if n := len(c.SupportedInterfaces); n != 3 || c.SupportedInterfaces[2].ProtocolVersion != "0.3" || c.SupportedInterfaces[0].ProtocolVersion != a2a.ProtocolVersion {
		t.Errorf("supportedInterfaces %+v", c.SupportedInterfaces)
	}
}
