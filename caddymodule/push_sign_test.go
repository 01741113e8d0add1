package caddymodule

import (
	"strings"
	"testing"
	"time"
)

// TestUnmarshalPushSign (PUSH-8): sign blocks of the push block, copied to
// the card for the JWKS; hs256 and incomplete keys are refused.
func TestUnmarshalPushSign(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name x
		}
		push {
			sign es256 {
				kid push-2
				key_file /etc/caddy/new.pem
				issuer https://agent.example.com
				ttl 2m
			}
			sign eddsa {
				kid push-1
				key_file /etc/caddy/old.pem
			}
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	p := hs.agent.Push
	if len(p.Sign) != 2 || p.Sign[0].KID != "push-2" || p.Sign[1].Alg != "eddsa" || p.SignIssuer != "https://agent.example.com" || time.Duration(p.SignTTL) != 2*time.Minute {
		t.Fatalf("push sign = %+v issuer %q ttl %v", p.Sign, p.SignIssuer, p.SignTTL)
	}
	if f := hs.agent.cardFacts(); len(f.PushSign) != 2 || hs.card.PushSign != nil {
		t.Errorf("card push_sign = %+v (a2a_card copy %+v), want both keys published, derived", f.PushSign, hs.card.PushSign)
	}
	for _, c := range []struct{ body, want string }{
		{"sign hs256 {\nkid a\nkey_file f\n}", "use es256 or eddsa"},
		{"sign es256 {\nkey_file f\n}", "kid is required"},
		{"sign es256 {\nkid a\n}", "key_file is required"},
		{"sign es256 {\nkid a\nkey_file f\n}\nsign es256 {\nkid a\nkey_file g\n}", "duplicate kid"},
		{"sign es256 {\nkid a\nkey_file f\nsecret s\n}", "unknown option"},
	} {
		_, err := parseBlock(t, "a2a {\ncard {\nname x\n}\npush {\n"+c.body+"\n}\n}")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}
