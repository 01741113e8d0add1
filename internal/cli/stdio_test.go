package cli

import (
	"errors"
	"strings"
	"testing"
)

// XPORT-4: `caddy a2a stdio` needs --config and takes no arguments (usage
// errors, exit 2).
func TestStdioUsage(t *testing.T) {
	wantUsage(t, []string{"stdio"}, "--config")
	wantUsage(t, []string{"stdio", "--config", "Caddyfile", "extra"}, "extra")
}

// XPORT-4: the command hands the opener the config, the adapter (caddyfile
// by default for Caddyfile* and *.caddyfile, as `caddy run` does) and the
// site; an opener failure is exit 1 with its message.
func TestStdioOpenerGetsConfig(t *testing.T) {
	var got []StdioConfig
	SetStdioOpener(func(c StdioConfig) (*StdioSite, error) {
		got = append(got, c)
		return nil, errors.New("cannot open that site")
	})
	t.Cleanup(func() { SetStdioOpener(nil) })
	cases := []struct {
		args    []string
		adapter string
	}{
		{[]string{"--config", "/etc/caddy/Caddyfile", "--site", "localhost:8080"}, "caddyfile"},
		{[]string{"--config", "agent.caddyfile"}, "caddyfile"},
		{[]string{"--config", "caddy.json"}, ""},
		{[]string{"--config", "Caddyfile", "--adapter", "json5"}, "json5"},
	}
	for _, tc := range cases {
		err, stderr := runA2A(t, append([]string{"stdio", "--principal", "p"}, tc.args...)...)
		if err == nil || !strings.Contains(stderr, "cannot open that site") {
			t.Errorf("%v: err %v, stderr %q; want the opener's failure", tc.args, err, stderr)
		}
		if err != nil && strings.Contains(err.Error(), "status 2") {
			t.Errorf("%v: exit 2, want 1 (not a usage error)", tc.args)
		}
	}
	if len(got) != len(cases) {
		t.Fatalf("opener called %d times, want %d", len(got), len(cases))
	}
	for i, tc := range cases {
		if got[i].Adapter != tc.adapter {
			t.Errorf("%v: adapter %q, want %q", tc.args, got[i].Adapter, tc.adapter)
		}
	}
	if got[0].Site != "localhost:8080" || got[0].ConfigFile != "/etc/caddy/Caddyfile" {
		t.Errorf("first call: %+v", got[0])
	}
}
