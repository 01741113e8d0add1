// Package harness runs the real caddy-a2a binary for end-to-end tests:
// it builds cmd/caddy once per test binary, starts gateways on free
// loopback ports with isolated XDG directories, and starts throwaway
// redis-server processes.
//
// Usage from a test package:
//
//	func TestMain(m *testing.M) { os.Exit(harness.Main(m)) }
//
//	func TestX(t *testing.T) {
//		gw := harness.StartGateway(t, `a2a { card { name x } }`)
//		resp, _ := http.Get(gw.URL + "/health")
//	}
package harness

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	binPath string
	rootDir string
)

// DefaultParallel is how many t.Parallel end-to-end tests Main lets run
// at once when -test.parallel is not given (Go's default, GOMAXPROCS, is 2
// on a 2-core machine): they spend most of their time waiting on gateway
// processes, Redis, timers and leases, not on the CPU.
const DefaultParallel = 4

// Main builds the caddy binary once, runs the tests and removes the build
// directory. Call it from TestMain: os.Exit(harness.Main(m)). Unless
// -test.parallel (go test -parallel) is given, it lets DefaultParallel
// parallel tests run at once.
func Main(m *testing.M) int {
	flag.Parse()
	if !flagGiven("test.parallel") {
		_ = flag.Set("test.parallel", strconv.Itoa(DefaultParallel))
	}
	dir, err := os.MkdirTemp("", "caddy-a2a-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "harness:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if err := build(dir); err != nil {
		fmt.Fprintln(os.Stderr, "harness: building caddy:", err)
		return 1
	}
	return m.Run()
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// RepoRoot returns the repository root (the directory holding go.mod).
func RepoRoot() string {
	if rootDir != "" {
		return rootDir
	}
	_, file, _, _ := runtime.Caller(0)
	rootDir = filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
	return rootDir
}

func build(dir string) error {
	out := filepath.Join(dir, "caddy")
	args := []string{"build", "-o", out}
	if Race() {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/caddy")...)
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, b)
	}
	binPath = out
	return nil
}

// Binary returns the path of the built caddy binary (after Main).
func Binary(t testing.TB) string {
	t.Helper()
	if binPath == "" {
		t.Fatal("harness: binary not built; call harness.Main from TestMain")
	}
	return binPath
}

// handedOut holds every port FreePort returned in this process: a port is
// free again once FreePort closes it, so without the set two parallel
// tests could be handed the same one before either gateway binds it.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a free TCP port on 127.0.0.1, never one it returned
// before in this process.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		_ = l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("free port: 100 ports in a row were handed out before")
	return 0
}

// WaitListening waits until addr (host:port) accepts TCP connections: a
// listener another app of the gateway opens at its own start (the a2a
// app's dedicated gRPC listener) may come up after the HTTP server the
// health check reached. It fails the test after 20 seconds.
func WaitListening(t testing.TB, addr string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never accepted a connection: %v", addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// SyncBuffer is a goroutine-safe output buffer (a process's stdout and
// stderr, read while it runs). The zero value is empty and ready.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Env returns a base environment for caddy subprocesses: the current
// environment without IACCODE_A2A_* variables, plus isolated XDG dirs
// under dir, plus extra ("K=V").
func Env(dir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "IACCODE_A2A_") || strings.HasPrefix(kv, "XDG_CONFIG_HOME=") || strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "XDG_DATA_HOME="+filepath.Join(dir, "data"), "HOME="+dir)
	return append(env, extra...)
}

// returns its combined output and exit error.
func Run(t testing.TB, dir string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Dir = dir
	cmd.Env = Env(t.TempDir())
	b, err := cmd.CombinedOutput()
	return string(b), err
}

// Adapt writes caddyfile to a new directory and runs `caddy adapt
// --config` on it (plus args, e.g. "--validate") as Run does, returning
// the combined output and the exit error.
func Adapt(t testing.TB, caddyfile string, args ...string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	return Run(t, dir, append([]string{"adapt", "--config", path}, args...)...)
}
