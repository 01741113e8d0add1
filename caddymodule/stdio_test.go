package caddymodule

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig"
)

const stdioSites = `{
	grace_period 3s
	log {
		output stdout
	}
	a2a {
		data_dir /tmp/x
	}
}
http://localhost:8080, http://127.0.0.1:8080 {
	a2a {
		card {
			name first
		}
	}
}
http://agent.example.com:9090 {
	route /x {
		respond 404
	}
	a2a {
		backend echo {
			chunks 2
		}
		card {
			name second
		}
	}
}
`

// adaptStdio adapts src and builds the stdio config for site.
func adaptStdio(t *testing.T, src, site string) (map[string]any, stdioCandidate, time.Duration, error) {
	t.Helper()
	adapted, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, cand, grace, err := stdioConfig(adapted, site)
	if err != nil {
		return nil, cand, grace, err
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out, cand, grace, nil
}

// XPORT-4: the stdio config keeps the a2a app and the chosen site's a2a
// handler, drops the http app (nothing listens), disables the admin
// endpoint and sends stdout logs to stderr.
func TestStdioConfigPicksSiteWithoutListeners(t *testing.T) {
	out, cand, grace, err := adaptStdio(t, stdioSites, "")
	if err != nil {
		t.Fatal(err)
	}
	if grace != 3*time.Second {
		t.Errorf("grace %v, want the grace_period 3s", grace)
	}
	if !strings.Contains(string(cand.handler), `"first"`) || cand.label() != "localhost:8080" {
		t.Errorf("default site %s (%s), want the first site", cand.label(), cand.handler)
	}
	apps := out["apps"].(map[string]any)
	if _, ok := apps["http"]; ok || len(apps) != 2 || apps["a2a"] == nil || apps["a2a_stdio"] == nil {
		t.Errorf("apps %v, want exactly a2a and a2a_stdio", apps)
	}
	admin := out["admin"].(map[string]any)
	if admin["disabled"] != true || admin["config"].(map[string]any)["persist"] != false {
		t.Errorf("admin %v, want disabled and not persisted", admin)
	}
	logs, _ := json.Marshal(out["logging"])
	if strings.Contains(string(logs), `"stdout"`) || !strings.Contains(string(logs), `"stderr"`) {
		t.Errorf("logging %s, want stdout rewritten to stderr", logs)
	}

	for _, site := range []string{"agent.example.com", "agent.example.com:9090", "http://agent.example.com:9090/", ":9090"} {
		_, cand, _, err := adaptStdio(t, stdioSites, site)
		if err != nil || !strings.Contains(string(cand.handler), `"chunks":2`) {
			t.Errorf("--site %s: %v, handler %s; want the second site's (inside its route)", site, err, cand.handler)
		}
	}
	for _, site := range []string{"127.0.0.1:8080", "localhost", ":8080"} {
		if _, cand, _, err := adaptStdio(t, stdioSites, site); err != nil || !strings.Contains(string(cand.handler), `"first"`) {
			t.Errorf("--site %s: %v, want the first site", site, err)
		}
	}
	if _, _, _, err := adaptStdio(t, stdioSites, "other.example.com"); err == nil || !strings.Contains(err.Error(), "agent.example.com:9090") {
		t.Errorf("unknown --site: %v, want an error listing the sites", err)
	}
	if _, _, _, err := adaptStdio(t, "http://h:1 {\n\trespond ok\n}\n", ""); err == nil || !strings.Contains(err.Error(), "no site with an a2a handler") {
		t.Errorf("config without a2a: %v", err)
	}
}

// XPORT-4, XPORT-5: stdio serves stdin/stdout only: a redis_rpc block of
// the chosen handler or of the a2a app is dropped (it would join the HTTP
// gateway's consumer group, and without the http app it has no a2a_auth
// to check credentials with), the rest of the handler and app is kept.
func TestStdioConfigDropsRedisRPC(t *testing.T) {
	src := `{
	a2a {
		data_dir /tmp/x
		redis_rpc {
			url redis://127.0.0.1:1/0
		}
	}
}
http://127.0.0.1:8080 {
	a2a {
		card {
			name first
		}
		redis_rpc {
			url redis://127.0.0.1:2/0
		}
	}
}
`
	out, _, _, err := adaptStdio(t, src, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "redis_rpc") || strings.Contains(string(b), "127.0.0.1:1") || strings.Contains(string(b), "127.0.0.1:2") {
		t.Errorf("stdio config keeps a redis_rpc block: %s", b)
	}
	if !strings.Contains(string(b), `"data_dir":"/tmp/x"`) || !strings.Contains(string(b), `"first"`) {
		t.Errorf("stdio config lost the a2a app or the handler: %s", b)
	}
}
