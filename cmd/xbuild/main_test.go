package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestBuilderForRepoManifest(t *testing.T) {
	var m Manifest
	if _, err := toml.DecodeFile("../../xcaddy.toml", &m); err != nil {
		t.Fatal(err)
	}
	b, out, err := builderFor(&m, "../..")
	if err != nil {
		t.Fatal(err)
	}
	if b.CaddyVersion != "v2.11.9" || !strings.HasSuffix(out, filepath.Join("bin", "caddy")) {
		t.Errorf("version %q output %q", b.CaddyVersion, out)
	}
	if len(b.Replacements) != 1 || b.Replacements[0].Old != "github.com/caddy-a2a/caddy-a2a" || !filepath.IsAbs(string(b.Replacements[0].New)) {
		t.Errorf("replacements = %+v", b.Replacements)
	}
	if len(b.Plugins) != 2 || b.Plugins[1].PackagePath != "github.com/caddy-a2a/caddy-a2a" || b.Plugins[1].Version != localVersion {
		t.Errorf("plugins = %+v", b.Plugins)
	}
}

func TestBuilderForErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/other\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]Manifest{
		"no version":     {Plugins: []Plugin{{Module: "x"}}},
		"no plugins":     {CaddyVersion: "v2.11.9"},
		"wrong module":   {CaddyVersion: "v2.11.9", Plugins: []Plugin{{Module: "example.com/mine/x", Replace: "."}}},
		"bad timeout":    {CaddyVersion: "v2.11.9", Plugins: []Plugin{{Module: "x"}}, Build: BuildSettings{TimeoutGet: "soon"}},
		"missing module": {CaddyVersion: "v2.11.9", Plugins: []Plugin{{Version: "v1.0.0"}}},
	} {
		if _, _, err := builderFor(&m, dir); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
