// Command xbuild builds the caddy-a2a Caddy binary from xcaddy.toml with the
// xcaddy library, so local and release builds share one manifest.
//
// Usage:
//
//	go run ./cmd/xbuild [-manifest xcaddy.toml] [-output path]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/caddyserver/xcaddy"
)

// Manifest is the decoded xcaddy.toml.
type Manifest struct {
	// CaddyVersion is the Caddy release to build, e.g. v2.11.9.
	CaddyVersion string `toml:"caddy_version"`
	// Output is the binary path, relative to the manifest's directory.
	Output string `toml:"output"`
	// Plugins are the modules compiled in.
	Plugins []Plugin `toml:"plugins"`
	// Build holds build settings.
	Build BuildSettings `toml:"build"`
}

// Plugin is one plugin package.
type Plugin struct {
	// Module is the Go package path to import.
	Module string `toml:"module"`
	// Version is the module version for `go get`; empty for a local tree.
	Version string `toml:"version"`
	// Replace is a local directory holding the plugin's module.
	Replace string `toml:"replace"`
}

// BuildSettings tune the build.
type BuildSettings struct {
	// TimeoutGet bounds `go get` (Go duration). Default: 10m.
	TimeoutGet string `toml:"timeout_get"`
	// TimeoutBuild bounds the whole build (Go duration). Default: 10m.
	TimeoutBuild string `toml:"timeout_build"`
	// Flags replace xcaddy's default go build flags.
	Flags string `toml:"flags"`
	// Race enables the race detector.
	Race bool `toml:"race"`
}

func main() {
	manifest := flag.String("manifest", "xcaddy.toml", "path of the build manifest")
	output := flag.String("output", "", "binary path (overrides the manifest's output)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *manifest, *output); err != nil {
		fmt.Fprintln(os.Stderr, "xbuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, manifestPath, outOverride string) error {
	var m Manifest
	md, err := toml.DecodeFile(manifestPath, &m)
	if err != nil {
		return fmt.Errorf("reading manifest: %w", err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return fmt.Errorf("manifest %s: unknown keys %v", manifestPath, undec)
	}
	b, out, err := builderFor(&m, filepath.Dir(manifestPath), func(dir string) string { return treeVersion(ctx, dir) })
	if err != nil {
		return fmt.Errorf("manifest %s: %w", manifestPath, err)
	}
	if outOverride != "" {
		out = outOverride
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	// xcaddy's own log lines follow; the first build downloads and
	// compiles Caddy and every plugin, later ones reuse the Go caches.
	fmt.Fprintf(os.Stderr, "xbuild: building %s: Caddy %s with %s (first build: several minutes)\n", out, b.CaddyVersion, pluginList(b))
	return b.Build(ctx, out)
}

// pluginList names the modules a build requires, with their versions.
func pluginList(b *xcaddy.Builder) string {
	var l []string
	for _, p := range b.Plugins {
		if p.Version != "" {
			l = append(l, p.String())
		}
	}
	return strings.Join(l, ", ")
}

// builderFor turns the manifest into an xcaddy.Builder and the output
// path. label gives the version a local tree (a replace) is built as.
func builderFor(m *Manifest, baseDir string, label func(dir string) string) (*xcaddy.Builder, string, error) {
	if m.CaddyVersion == "" {
		return nil, "", errors.New("caddy_version: required (pin a release such as v2.11.9)")
	}
	if m.Output == "" {
		m.Output = "bin/caddy"
	}
	if len(m.Plugins) == 0 {
		return nil, "", errors.New("plugins: at least one plugin is required")
	}
	b := &xcaddy.Builder{
		CaddyVersion: m.CaddyVersion,
		TimeoutGet:   10 * time.Minute,
		TimeoutBuild: 10 * time.Minute,
		BuildFlags:   m.Build.Flags,
		RaceDetector: m.Build.Race,
	}
	for name, v := range map[string]*time.Duration{"timeout_get": &b.TimeoutGet, "timeout_build": &b.TimeoutBuild} {
		s := m.Build.TimeoutGet
		if name == "timeout_build" {
			s = m.Build.TimeoutBuild
		}
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return nil, "", fmt.Errorf("build.%s: invalid duration %q", name, s)
		}
		*v = d
	}
	for i, p := range m.Plugins {
		if p.Module == "" {
			return nil, "", fmt.Errorf("plugins[%d].module: required", i)
		}
		b.Plugins = append(b.Plugins, xcaddy.Dependency{PackagePath: p.Module, Version: p.Version})
		if p.Replace == "" {
			continue
		}
		dir := p.Replace
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(baseDir, dir)
		}
		abs, err := filepath.Abs(dir) // xcaddy passes it to go mod edit in a temp dir
		if err != nil {
			return nil, "", err
		}
		root, err := modulePath(filepath.Join(abs, "go.mod"))
		if err != nil {
			return nil, "", fmt.Errorf("plugins[%d].replace: %w", i, err)
		}
		if p.Module != root && !strings.HasPrefix(p.Module, root+"/") {
			return nil, "", fmt.Errorf("plugins[%d]: %s is not inside module %s found at %s", i, p.Module, root, p.Replace)
		}
		b.Replacements = append(b.Replacements, xcaddy.NewReplace(root, abs))
		switch {
		case p.Version != "":
		case p.Module == root:
			// A bare `go get` of a replaced module asks the proxy for
			// its latest version; a version pins the local tree.
			b.Plugins[len(b.Plugins)-1].Version = label(abs)
		default:
			// xcaddy skips `go get` for a package inside a replaced module,
			// and its bare `go get` then asks the proxy for the package
			// path. Requiring the module root (a package that imports the
			// plugin) at the tree's version pins the local tree; that
			// version is what `caddy list-modules --versions` shows.
			b.Plugins = append(b.Plugins, xcaddy.Dependency{PackagePath: root, Version: label(abs)})
		}
	}
	out := m.Output
	if !filepath.IsAbs(out) {
		out = filepath.Join(baseDir, out)
	}
	return b, out, nil
}

// modulePath reads the module line of a go.mod file.
func modulePath(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s: no module line", gomod)
}
