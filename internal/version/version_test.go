package version

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	dep := func(v string) []*debug.Module {
		return []*debug.Module{{Path: "github.com/caddyserver/caddy/v2", Version: "v2.11.9"}, {Path: ModulePath, Version: v}}
	}
	for name, c := range map[string]struct {
		bi   debug.BuildInfo
		want string
	}{
		"xcaddy from a tag":      {debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: Devel}, Deps: dep("v1.2.3")}, "v1.2.3"},
		"xcaddy from a checkout": {debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: Devel}, Deps: dep("v0.0.0-dev")}, "v0.0.0-dev"},
		"xcaddy =. (directory replacement)": {debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: Devel}, Deps: []*debug.Module{
			{Path: ModulePath, Version: "v0.0.0-dev", Replace: &debug.Module{Path: "/tmp/caddy-a2a", Version: Devel}}}}, "v0.0.0-dev"},
		"replaced by a versioned fork": {debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: Devel}, Deps: []*debug.Module{
			{Path: ModulePath, Version: "v1.0.0", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.0.1"}}}}, "v1.0.1"},
		"go build, VCS version": {debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: "v1.2.4-0.20261202035539-df52465abcde+dirty"}}, "v1.2.4-0.20261202035539-df52465abcde+dirty"},
		"go build, revision only": {debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: Devel}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "df52465abcdef0123456789"}, {Key: "vcs.modified", Value: "true"}}}, "(devel) df52465abcde+dirty"},
		"go build, no VCS":   {debug.BuildInfo{Main: debug.Module{Path: ModulePath, Version: Devel}}, Devel},
		"another main, none": {debug.BuildInfo{Main: debug.Module{Path: "caddy", Version: Devel}, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, Devel},
	} {
		if got := FromBuildInfo(&c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", name, got, c.want)
		}
	}
}

func TestOverride(t *testing.T) {
	defer func(o string) { Override = o }(Override)
	Override = "v9.9.9"
	if got := String(); got != "v9.9.9" {
		t.Errorf("String() = %q with Override set", got)
	}
}
