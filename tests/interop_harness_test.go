package tests

// A small private harness for the interop tests: it builds the gateway binary
// once per test run and starts it with a Caddyfile on a free port. All names
// are prefixed with "interop" so they cannot clash with the shared e2e harness.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	interopBuildOnce sync.Once
	interopBinary    string
	interopBuildErr  error
)

// interopRepoRoot is the module root (the tests run in <root>/tests).
func interopRepoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(wd)
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("cannot find the module root above %s: %v", wd, err)
	}
	return root
}

// interopGatewayBinary builds ./cmd/caddy once into a private temp dir (not
// bin/caddy, so that concurrent builds by other packages do not race).
func interopGatewayBinary(t *testing.T) string {
	t.Helper()
	root := interopRepoRoot(t)
	interopBuildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "caddy-a2a-interop-bin-")
		if err != nil {
			interopBuildErr = err
			return
		}
		bin := filepath.Join(dir, "caddy")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			interopBuildErr = fmt.Errorf("go build ./cmd/caddy: %v\n%s", err, out)
			return
		}
		interopBinary = bin
	})
	if interopBuildErr != nil {
		t.Fatal(interopBuildErr)
	}
	return interopBinary
}

func interopFreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// interopGateway is one running gateway process.
type interopGateway struct {
	BaseURL   string // e.g. http://127.0.0.1:1234 (no trailing slash)
	accessLog string
	stderr    string
}

// interopStartGateway starts the gateway with the echo backend configured by
// backendBlock (e.g. "backend echo" or "backend echo {\n delay 100ms\n}").
// The site writes a JSON access log, so the tests can check the headers
// that the clients really sent.
func interopStartGateway(t *testing.T, backendBlock string) *interopGateway {
	t.Helper()
	bin := interopGatewayBinary(t)
	dir := t.TempDir()
	port := interopFreePort(t)
	gw := &interopGateway{
		BaseURL:   fmt.Sprintf("http://127.0.0.1:%d", port),
		accessLog: filepath.Join(dir, "access.log"),
		stderr:    filepath.Join(dir, "caddy.log"),
	}
	caddyfile := fmt.Sprintf(`{
	admin off
	persist_config off
	storage file_system %[1]s/storage
	a2a {
		data_dir %[1]s/data
	}
}
http://127.0.0.1:%[2]d {
	log {
		output file %[3]s
		format json
	}
	a2a {
		card {
			name test-agent
			description "A test agent for the interop tests."
			skill echo {
				name Echo
				description "Echoes the prompt back to the caller."
				tags echo test
			}
		}
		%[4]s
	}
}
`, dir, port, gw.accessLog, backendBlock)
	cfgPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(gw.stderr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "run", "--config", cfgPath, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(gw.stderr); err == nil {
				t.Logf("gateway log (%s):\n%s", backendBlock, interopTail(string(b), 8000))
			}
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-exited:
			b, _ := os.ReadFile(gw.stderr)
			t.Fatalf("gateway exited during start-up:\n%s", b)
		default:
		}
		resp, err := http.Get(gw.BaseURL + "/.well-known/agent-card.json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return gw
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(gw.stderr)
			t.Fatalf("gateway did not serve its card within 30s (last err %v):\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// interopAccessEntry is one request of the access log.
type interopAccessEntry struct {
	Method  string
	URI     string
	Status  int
	Headers http.Header
}

// interopAccessLog reads the site's access log (Caddy writes it synchronously
// when a request ends).
func (gw *interopGateway) interopAccessLog(t *testing.T) []interopAccessEntry {
	t.Helper()
	f, err := os.Open(gw.accessLog)
	if err != nil {
		t.Fatalf("open access log: %v", err)
	}
	defer f.Close()
	var out []interopAccessEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var line struct {
			Request struct {
				Method  string              `json:"method"`
				URI     string              `json:"uri"`
				Headers map[string][]string `json:"headers"`
			} `json:"request"`
			Status int `json:"status"`
		}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil || line.Request.Method == "" {
			continue
		}
		out = append(out, interopAccessEntry{
			Method:  line.Request.Method,
			URI:     line.Request.URI,
			Status:  line.Status,
			Headers: http.Header(line.Request.Headers),
		})
	}
	return out
}

// interopCheckVersionHeaders asserts that every A2A call (everything except
// the agent card) carried "A2A-Version: 1.0", and returns a summary of the
// distinct header names seen per request kind, for the logs.
func (gw *interopGateway) interopCheckVersionHeaders(t *testing.T, who string) {
	t.Helper()
	entries := gw.interopAccessLog(t)
	calls := 0
	names := map[string]bool{}
	for _, e := range entries {
		for k := range e.Headers {
			names[k] = true
		}
		if strings.HasPrefix(e.URI, "/.well-known/") {
			continue
		}
		calls++
		if v := e.Headers.Get("A2A-Version"); v != "1.0" {
			t.Errorf("%s: %s %s was sent with A2A-Version %q, want \"1.0\" (headers %v)", who, e.Method, e.URI, v, e.Headers)
		}
	}
	if calls == 0 {
		t.Errorf("%s: the access log shows no A2A call", who)
	}
	var list []string
	for k := range names {
		list = append(list, k)
	}
	t.Logf("%s: %d A2A calls, header names seen: %s", who, calls, strings.Join(interopSorted(list), ", "))
}

func interopSorted(s []string) []string {
	sort.Strings(s)
	return s
}

func interopTail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
