package main

import (
	"context"
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
	b, out, err := builderFor(&m, "../..", func(string) string { return "v0.0.0-test" })
	if err != nil {
		t.Fatal(err)
	}
	if b.CaddyVersion != "v2.11.9" || !strings.HasSuffix(out, filepath.Join("bin", "caddy")) {
		t.Errorf("version %q output %q", b.CaddyVersion, out)
	}
	if len(b.Replacements) != 1 || b.Replacements[0].Old != "github.com/caddy-a2a/caddy-a2a" || !filepath.IsAbs(string(b.Replacements[0].New)) {
		t.Errorf("replacements = %+v", b.Replacements)
	}
	if len(b.Plugins) != 2 || b.Plugins[1].PackagePath != "github.com/caddy-a2a/caddy-a2a" || b.Plugins[1].Version != "v0.0.0-test" {
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
		if _, _, err := builderFor(&m, dir, func(string) string { return localVersion }); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBuilderForRootModule(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/plugin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m := Manifest{CaddyVersion: "v2.11.9", Plugins: []Plugin{{Module: "example.com/plugin", Replace: "."}}}
	b, _, err := builderFor(&m, dir, func(string) string { return "v0.0.0-test" })
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Plugins) != 1 || b.Plugins[0].Version != "v0.0.0-test" {
		t.Errorf("plugins = %+v, want the root pinned at the tree's version", b.Plugins)
	}
}

func TestPseudoVersion(t *testing.T) {
	const head = "df52465abcdef0123456789abcdef0123456789a 1796182539" // 2026-12-02T03:35:39Z
	for _, c := range []struct{ exact, older, want string }{
		{"", "", "v0.0.0-20261202033539-df52465abcde"},
		{"", "v0.1.0", "v0.1.1-0.20261202033539-df52465abcde"},
		{"", "v1.2.0-rc.1", "v1.2.0-rc.1.0.20261202033539-df52465abcde"},
		{"v0.2.0", "v0.2.0", "v0.2.0"},
		{"", "v2.0.0", "v0.0.0-20261202033539-df52465abcde"},
		{"", "release-1", "v0.0.0-20261202033539-df52465abcde"},
	} {
		got, err := pseudoVersion(head, c.exact, c.older)
		if err != nil || got != c.want {
			t.Errorf("exact %q older %q: %q, %v; want %q", c.exact, c.older, got, err, c.want)
		}
	}
	if _, err := pseudoVersion("nonsense", "", ""); err == nil {
		t.Error("bad git output: no error")
	}
}

func TestTreeVersionOutsideGit(t *testing.T) {
	if got := treeVersion(context.Background(), t.TempDir()); got != localVersion {
		t.Errorf("treeVersion of a plain directory = %q, want %q", got, localVersion)
	}
}
