package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

func parseBlock(t *testing.T, src string) (*a2aHandlers, error) {
	t.Helper()
	d := caddyfile.NewTestDispenser(src)
	d.Next() // directive name
	return unmarshalA2A(d)
}

func TestUnmarshalCardAndAuth(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name iac-code
			description "An agent."
			version 2.0.0
			provider "Example Org" https://example.com
			documentation_url https://docs.example.com
			icon_url https://example.com/icon.png
			public_url https://agent.example.com
			max_age 2m
			namespace acme
			input_modes text/plain application/json
			output_modes text/plain
			extension urn:iac-code:a2a:artifact-metadata:v1 required
			extension urn:other {
				description "Other ext"
				param mode strict
			}
			skill gen {
				name "Gen"
				description "Generates things for you."
				tags a b
				example "one"
				example "two"
				input_modes text/plain
				output_modes application/json
			}
		}
		auth {
			bearer {env.TOK}
			basic alice $2a$10$aetn5KWkJm/o6DlAdTcxpu6hCmamOkuEPxHTa19zNS5ey.RUBXzhK
			api_key {file./run/key}
			api_key_header X-Key
			principal ci bearer ci-token
			principal ci api_key ci-key
			principal bob basic bob pw
			default_principal ops
			realm agents
			no_env
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	c := hs.card
	if c.Name != "iac-code" || c.Version != "2.0.0" || c.Provider.Organization != "Example Org" ||
		c.PublicURL != "https://agent.example.com" || c.Namespace != "acme" || c.MaxAge == nil ||
		len(c.InputModes) != 2 || len(c.Skills) != 1 || len(c.Skills[0].Examples) != 2 ||
		c.Skills[0].OutputModes[0] != "application/json" || len(c.Extensions) != 2 ||
		!c.Extensions[0].Required || c.Extensions[1].Params["mode"] != "strict" {
		t.Errorf("card parsed wrong: %+v", c)
	}
	a := hs.auth
	if a.Token != "{env.TOK}" || a.Basic.Username != "alice" || a.APIKey != "{file./run/key}" ||
		a.APIKeyHeader != "X-Key" || a.DefaultPrincipal != "ops" || a.Realm != "agents" || !a.NoEnv {
		t.Errorf("auth parsed wrong: %+v", a.Config)
	}
	if len(a.Principals) != 2 || a.Principals[0].Token != "ci-token" || a.Principals[0].APIKey != "ci-key" || a.Principals[1].Basic.Password != "pw" {
		t.Errorf("principals parsed wrong: %+v", a.Principals)
	}
	// The a2a_card derives its schemes from the a2a_auth handler; the
	// agent's card (the extended card) gets them from the directive.
	if s := hs.agent.Card.Security; s == nil || !s.Bearer || !s.Basic || !s.APIKey || s.APIKeyHeader != "X-Key" || s.FromEnv || c.Security != nil {
		t.Errorf("agent card security = %+v, a2a_card security %+v (want none: derived)", s, c.Security)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	card := "card {\nname x\n}\n"
	tests := []struct {
		name, src, want string
	}{
		{"no card", `a2a {
		}`, "card block"},
		{"args", `a2a foo {
			` + card + `}`, "wrong argument count"},
		{"unknown sub", `a2a {
			` + card + `bogus 1
		}`, `unknown a2a subdirective "bogus"`},
		{"dup card", `a2a {
			` + card + card + `}`, "duplicate card block"},
		{"dup auth", `a2a {
			` + card + "auth {\n}\nauth {\n}\n}", "duplicate auth block"},
		{"empty name", `a2a {
			card {
				description x
			}
		}`, "card name: must not be empty"},
		{"skill without tags", `a2a {
			card {
				name x
				skill s {
					name S
					description "Something useful."
				}
			}
		}`, `skill "s" tags`},
		{"duplicate skill", `a2a {
			card {
				name x
				skill s {
					tags a
				}
				skill s {
					tags a
				}
			}
		}`, `card skill "s" id: duplicate skill id`},
		{"bad url", `a2a {
			card {
				name x
				documentation_url nope
			}
		}`, "documentation_url"},
		{"dup card option", `a2a {
			card {
				name x
				name y
			}
		}`, "duplicate name"},
		{"unknown card option", `a2a {
			card {
				name x
				colour blue
			}
		}`, `unknown card option "colour"`},
		{"bad max_age", `a2a {
			card {
				name x
				max_age soon
			}
		}`, "max_age"},
		{"provider args", `a2a {
			card {
				name x
				provider Org
			}
		}`, "wrong argument count"},
		{"unknown skill option", `a2a {
			card {
				name x
				skill s {
					colour blue
				}
			}
		}`, `unknown option "colour"`},
		{"basic without password", `a2a {
			` + card + `auth {
				basic alice
			}
		}`, "password (or bcrypt hash) required"},
		{"dup bearer", `a2a {
			` + card + `auth {
				bearer a
				token b
			}
		}`, "duplicate token"},
		{"unknown auth option", `a2a {
			` + card + `auth {
				oauth x
			}
		}`, `unknown auth option "oauth"`},
		{"principal bad scheme", `a2a {
			` + card + `auth {
				principal ci jwt x
			}
		}`, `unknown scheme "jwt"`},
		{"principal dup scheme", `a2a {
			` + card + `auth {
				principal ci bearer a
				principal ci bearer b
			}
		}`, "duplicate bearer token"},
		{"principal no scheme", `a2a {
			` + card + `auth {
				principal ci
			}
		}`, "usage is principal"},
		{"no_env arg", `a2a {
			` + card + `auth {
				no_env yes
			}
		}`, "wrong argument count"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseBlock(t, tc.src)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want containing %q", err, tc.want)
			}
		})
	}
}

func TestAdaptRouteOrder(t *testing.T) {
	src := `{
	admin off
}
http://127.0.0.1:9999 {
	respond /x 204
	a2a {
		card {
			name x
		}
	}
}`
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, _, err := adapter.Adapt([]byte(src), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	s := string(out)
	var order []string
	for _, h := range []string{`"handler":"a2a_health"`, `"handler":"a2a_card"`, `"handler":"a2a_auth"`, `"handler":"a2a"`, `"handler":"static_response"`} {
		i := strings.Index(s, h)
		if i < 0 {
			t.Fatalf("adapted config lacks %s: %s", h, s)
		}
		order = append(order, h)
		_ = i
	}
	idx := func(h string) int { return strings.Index(s, h) }
	if !(idx(`"handler":"a2a_health"`) < idx(`"handler":"a2a_card"`) &&
		idx(`"handler":"a2a_card"`) < idx(`"handler":"a2a_auth"`) &&
		idx(`"handler":"a2a_auth"`) < idx(`"handler":"a2a"`)) {
		t.Errorf("handler order wrong: %s", s)
	}
	if idx(`"handler":"a2a_health"`) > idx(`"handler":"static_response"`) {
		t.Errorf("a2a must sort before respond: %s", s)
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
}

// RPC-11: subscribe_idle_timeout takes one positive duration.
func TestUnmarshalSubscribeIdleTimeout(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nsubscribe_idle_timeout 90s\n}")
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(hs.agent.SubscribeIdleTimeout); got != 90*time.Second {
		t.Errorf("SubscribeIdleTimeout = %v, want 90s", got)
	}
	for _, bad := range []string{"subscribe_idle_timeout 0s", "subscribe_idle_timeout -1m", "subscribe_idle_timeout soon", "subscribe_idle_timeout", "subscribe_idle_timeout 1m 2m"} {
		_, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}")
		if err == nil || !strings.Contains(err.Error(), "subscribe_idle_timeout") && !strings.Contains(err.Error(), "argument") {
			t.Errorf("%q: err = %v, want an error about subscribe_idle_timeout", bad, err)
		}
	}
}

// TestDuplicateOptions: every block refuses an option given twice with
// "<block>: duplicate <option>" (token counts as bearer), and accepts its
// repeatable options more than once.
func TestDuplicateOptions(t *testing.T) {
	card := "card {\nname x\n}\n"
	for src, want := range map[string]string{
		"a2a {\n" + card + "auth {\nbearer a\ntoken b\n}\n}":                            "auth: duplicate token",
		"a2a {\ncard {\nname x\nskill s {\ntags a\ntags b\n}\n}\n}":                     `skill "s": duplicate tags`,
		"a2a {\ncard {\nname x\nsign hs256 {\nkid k\nkid l\n}\n}\n}":                    "card sign: duplicate kid",
		"a2a {\n" + card + "push {\nworkers 1\nworkers 2\n}\n}":                         "push: duplicate workers",
		"a2a {\n" + card + "push {\nqueue redis-streams {\nstream a\nstream b\n}\n}\n}": "push redis-streams: duplicate stream",
		"a2a {\n" + card + "auth {\njwt {\nissuer a\nissuer b\n}\n}\n}":                 "auth jwt: duplicate issuer",
		"a2a {\n" + card + card + "}":                                                   "a2a: duplicate card block",
	} {
		if _, err := parseBlock(t, src); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
	d := caddyfile.NewTestDispenser("a2a {\ndata_dir a\ndata_dir b\n}")
	if _, err := parseAppOption(d, nil); err == nil || !strings.Contains(err.Error(), "a2a: duplicate data_dir") {
		t.Errorf("global a2a block: error %v", err)
	}
	repeated := "a2a {\ncard {\nname x\nskill s {\nname S\ndescription \"Does a thing well.\"\ntags a\nexample one\nexample two\n}\n" +
		"skill t {\nname T\ndescription \"Does another thing.\"\ntags b\n}\n}\n" +
		"auth {\nprincipal a bearer tok-a\nprincipal b bearer tok-b\n}\n" +
		"push {\nallow_private_networks 10.0.0.0/8\nallow_private_networks 127.0.0.0/8\n}\n}"
	hs, err := parseBlock(t, repeated)
	if err != nil {
		t.Fatal(err)
	}
	if len(hs.card.Skills) != 2 || len(hs.card.Skills[0].Examples) != 2 || len(hs.auth.Principals) != 2 || len(hs.agent.Push.AllowPrivateNetworks) != 2 {
		t.Fatalf("repeatable options: %+v %+v %+v", hs.card.Skills, hs.auth.Principals, hs.agent.Push)
	}
}
