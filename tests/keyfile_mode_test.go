package tests

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestPrivateKeyFileMode (issue 26.5, PUSH-8, CARD-6): one key-file rule
// for every private key the gateway reads. A push signing key or a card
// signing key at 0644 makes `caddy validate` and `caddy run` fail with a
// message naming the file, its mode and the fix (never the key); at 0600
// the same config starts and serves the JWKS.
func TestPrivateKeyFileMode(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file modes have no group/other bits on Windows")
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, block string }{
		{"push sign", "push {\n\t\tallow_private_networks 127.0.0.0/8\n\t\tsign es256 {\n\t\t\tkid p1\n\t\t\tkey_file KEY\n\t\t}\n\t}"},
		{"card sign", "card {\n\t\tname keymode\n\t\tsign es256 {\n\t\t\tkid c1\n\t\t\tkey_file KEY\n\t\t}\n\t\tjwks_path /.well-known/jwks.json\n\t}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			key := trustWritePEM(t, dir, "signing.pem", ecKey)
			site := "a2a {\n\t" + strings.ReplaceAll(tc.block, "KEY", key) + "\n}"
			if !strings.Contains(site, "card {") {
				site = strings.Replace(site, "a2a {\n", "a2a {\n\tcard {\n\t\tname keymode\n\t\tpublic_url https://agent.example.com\n\t}\n", 1)
			}
			if err := os.Chmod(key, 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "Caddyfile")
			cfg := "{\n admin off\n persist_config off\n}\nhttp://127.0.0.1:" + strconv.Itoa(harness.FreePort(t)) + " {\n" + site + "\n}\n"
			if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			pemBytes, _ := os.ReadFile(key)
			for _, cmd := range [][]string{
				{"validate", "--config", path, "--adapter", "caddyfile"},
				{"run", "--config", path, "--adapter", "caddyfile"},
			} {
				out, err := harness.Run(t, dir, cmd...)
				if _, exited := err.(*exec.ExitError); !exited {
					t.Fatalf("caddy %s with the key at 0644: %v, want a failed start\n%s", cmd[0], err, out)
				}
				plain := strings.ReplaceAll(out, `\"`, `"`)
				for _, want := range []string{`"signing.pem"`, "mode 0644", "chmod 600 signing.pem"} {
					if !strings.Contains(plain, want) {
						t.Fatalf("caddy %s: output lacks %q:\n%s", cmd[0], want, out)
					}
				}
				if strings.Contains(out, string(pemBytes[30:60])) {
					t.Fatalf("caddy %s: output holds key material:\n%s", cmd[0], out)
				}
			}
			if err := os.Chmod(key, 0o600); err != nil {
				t.Fatal(err)
			}
			gw := harness.StartGateway(t, site)
			r := harness.At(gw.URL+"/.well-known/jwks.json").Do(t, "GET", "")
			if r.StatusCode != 200 || !strings.Contains(string(r.Raw), `"EC"`) {
				t.Fatalf("jwks at 0600: HTTP %d %s", r.StatusCode, r.Raw)
			}
		})
	}
}

// TestPageTokenKeyFileMode (issue 26.5): the page-token key in the data
// directory follows the same key-file rule: after a chmod 644 the gateway
// does not start again, and says which file and how to fix it.
func TestPageTokenKeyFileMode(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("file modes have no group/other bits on Windows")
	}
	gw := harness.StartGateway(t, "a2a {\n\tcard {\n\t\tname keymode\n\t}\n}")
	gw.Stop()
	var key string
	_ = filepath.WalkDir(gw.Dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "pagetoken.key" {
			key = p
		}
		return nil
	})
	if key == "" {
		t.Fatal("no pagetoken.key in the data directory")
	}
	if err := os.Chmod(key, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness.Binary(t), "run", "--config", gw.ConfigPath, "--adapter", "caddyfile")
	cmd.Dir, cmd.Env = gw.Dir, harness.Env(gw.Dir)
	out, err := cmd.CombinedOutput()
	if _, exited := err.(*exec.ExitError); !exited || ctx.Err() != nil {
		t.Fatalf("start with pagetoken.key at 0644: %v, want a failed start\n%s", err, out)
	}
	plain := strings.ReplaceAll(string(out), `\"`, `"`)
	for _, want := range []string{`"pagetoken.key"`, "mode 0644", "chmod 600 pagetoken.key"} {
		if !strings.Contains(plain, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if err := os.Chmod(key, 0o600); err != nil {
		t.Fatal(err)
	}
	gw.Start()
}
