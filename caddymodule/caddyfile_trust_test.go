package caddymodule

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestTrustCaddyfileSignAndJWT(t *testing.T) {
	d := caddyfile.NewTestDispenser(`a2a {
		card {
			name x
			sign es256 {
				kid ec-1
				key_file /k/ec.pem
				jku https://h/.well-known/jwks.json
			}
			sign hs256 {
				kid hs-1
				secret {env.S}
			}
			jwks_path /.well-known/jwks.json
		}
		auth {
			jwt {
				secret {env.J}
				issuer https://i
				audience a
				algorithms HS256
				clock_skew 1m
			}
		}
	}`)
	d.Next()
	hs, err := unmarshalA2A(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.card.Sign) != 2 || hs.card.Sign[0].Alg != "es256" || hs.card.Sign[0].KeyFile != "/k/ec.pem" || hs.card.Sign[1].Secret != "{env.S}" || hs.card.JWKSPath != "/.well-known/jwks.json" {
		t.Fatalf("sign: %+v %q", hs.card.Sign, hs.card.JWKSPath)
	}
	j := hs.auth.JWT
	if j == nil || j.Secret != "{env.J}" || j.Issuer != "https://i" || j.Audience != "a" || len(j.Algorithms) != 1 {
		t.Fatalf("jwt: %+v", j)
	}
	if s := securityOf(hs.auth); s == nil || !s.JWT || !s.Bearer || hs.card.Security != nil {
		t.Fatalf("card security: %+v (a2a_card copy %+v)", s, hs.card.Security)
	}
	if hs.agent.Card == nil || len(hs.agent.Card.Sign) != 2 {
		t.Fatal("the agent's card copy lacks the signing keys (extended card would be unsigned)")
	}
}

func TestTrustCaddyfileErrors(t *testing.T) {
	for name, tc := range map[string]struct{ src, want string }{
		"bad alg":        {"sign rs256 {\nkid k\n}", "alg must be hs256, es256 or eddsa"},
		"no kid":         {"sign hs256 {\nsecret x\n}", "kid is required"},
		"hs256 key_file": {"sign hs256 {\nkid k\nkey_file f\n}", "hs256 takes a secret, not a key_file"},
		"es256 secret":   {"sign es256 {\nkid k\nsecret s\n}", "es256 takes a key_file, not a secret"},
		"es256 no file":  {"sign es256 {\nkid k\n}", "key_file is required"},
		"dup kid":        {"sign hs256 {\nkid k\nsecret s\n}\nsign hs256 {\nkid k\nsecret t\n}", "duplicate kid"},
		"unknown opt":    {"sign hs256 {\nkid k\nsecret s\nfoo bar\n}", "unknown option"},
	} {
		d := caddyfile.NewTestDispenser("a2a {\ncard {\nname x\n" + tc.src + "\n}\n}")
		d.Next()
		_, err := unmarshalA2A(d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", name, tc.want, err)
		}
	}
	for name, tc := range map[string]struct{ src, want string }{
		"no source":  {"jwt {\nissuer i\n}", "set secret"},
		"bad skew":   {"jwt {\nsecret s\nclock_skew 1h\n}", "clock_skew"},
		"unknown":    {"jwt {\nsecret s\nfoo b\n}", "unknown option"},
		"dup option": {"jwt {\nsecret s\nsecret t\n}", "duplicate"},
	} {
		d := caddyfile.NewTestDispenser("a2a {\ncard {\nname x\n}\nauth {\n" + tc.src + "\n}\n}")
		d.Next()
		_, err := unmarshalA2A(d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: want %q, got %v", name, tc.want, err)
		}
	}
}
