// Package version says which version of the caddy-a2a module a binary
// was built from (OPS-10), for `caddy version`, `caddy list-modules
// --versions` and the caddy_a2a_build_info metric.
//
// The version comes from the binary's build info: for an xcaddy build it
// is the module version xcaddy required — a tag (v1.2.3) when built from
// the module proxy, the label given before `=.` (`--with
// github.com/caddy-a2a/caddy-a2a@v0.0.0-dev=.`) or the commit's
// pseudo-version (`make build`) when built from a checkout. A `go build`
// inside the checkout (the module is the main module) reports the version
// the go command stamped from the VCS, or "(devel)". Override, set at link
// time, takes precedence over all of them.
package version

import (
	"runtime/debug"
	"strings"
)

// ModulePath is the path of the caddy-a2a Go module.
const ModulePath = "github.com/caddy-a2a/caddy-a2a"

// Override, when set at link time, is reported instead of the version in
// the build info:
//
//	go build -ldflags "-X github.com/caddy-a2a/caddy-a2a/internal/version.Override=v1.2.3" ./cmd/caddy
var Override string

// Devel is the version reported when the build info has none.
const Devel = "(devel)"

// String returns the version of the caddy-a2a module in this binary.
func String() string {
	if Override != "" {
		return Override
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Devel
	}
	return FromBuildInfo(bi)
}

// FromBuildInfo returns the version of the caddy-a2a module recorded in
// bi (nil: none): its version as a dependency (xcaddy builds; a versioned
// replacement's version when it is replaced by one), else the main module's
// version, else Devel followed by the VCS revision when one was stamped.
func FromBuildInfo(bi *debug.BuildInfo) string {
	if bi == nil {
		return Devel
	}
	for _, d := range bi.Deps {
		if d.Path != ModulePath {
			continue
		}
		// A directory replacement (xcaddy's `=.`) records "(devel)" as
		// its version: the required version is the one to report then.
		if d.Replace != nil && d.Replace.Version != "" && d.Replace.Version != Devel {
			return d.Replace.Version // replaced by another versioned module (a fork)
		}
		if d.Version != "" {
			return d.Version
		}
	}
	if bi.Main.Path == ModulePath && bi.Main.Version != "" && bi.Main.Version != Devel {
		return bi.Main.Version
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if bi.Main.Path != ModulePath || rev == "" {
		return Devel
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return strings.Join([]string{Devel, rev + modified}, " ")
}

// CaddyModulePath is the path of Caddy's Go module.
const CaddyModulePath = "github.com/caddyserver/caddy/v2"

// Caddy returns the version of the Caddy module in this binary, or
// "unknown" when the build info does not list it (as in test binaries).
func Caddy() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == CaddyModulePath && d.Version != "" {
				return d.Version
			}
		}
	}
	return "unknown"
}
