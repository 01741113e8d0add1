package harness

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Gateway is a running caddy process.
type Gateway struct {
	// URL is the base URL, e.g. http://127.0.0.1:PORT (no trailing slash).
	URL string
	// Addr is host:port of the site.
	Addr string
	// Port is the HTTP port.
	Port int
	// HTTPSPort is Caddy's https_port, {{HTTPS_PORT}} in a site (for a
	// site on https://127.0.0.1:{{HTTPS_PORT}} with `tls internal`).
	HTTPSPort int
	// Dir is the gateway's private directory (Caddyfile, XDG dirs, data).
	Dir string
	// ConfigPath is the Caddyfile written for this gateway.
	ConfigPath string
	// AdminURL is the admin endpoint (http://127.0.0.1:PORT) when
	// Options.Admin is set, else "".
	AdminURL string

	t         testing.TB
	env       []string
	cmd       *exec.Cmd
	done      chan struct{}
	out       *SyncBuffer
	opts      Options
	httpsPort int
	adminAddr string
}

// Options tune StartGatewayWith.
type Options struct {
	// Env adds environment variables ("K=V") to the process.
	Env []string
	// StartTimeout bounds the wait for /health at StartGateway, Start and
	// Restart. Default: 15s.
	StartTimeout time.Duration
	// NoHealthWait skips waiting for /health (for configs without a2a).
	NoHealthWait bool
	// ReadyPath is the path polled until it answers 200 at a start, instead
	// of /health (e.g. the card, for tests that check every request the
	// site logged).
	ReadyPath string
	// Global is added to the global options block, e.g.
	// "a2a {\n\tshutdown_timeout 2s\n}" ({{DIR}} and {{PORT}} are
	// replaced as in the site).
	Global string
	// Admin turns the admin endpoint on at a free loopback port
	// (Gateway.AdminURL) instead of "admin off".
	Admin bool
	// GracePeriod is Caddy's grace_period. Default: 1s.
	GracePeriod time.Duration
	// Wrap is a command prefix the gateway runs under, e.g. {"strace",
	// "-f", "-o", path}: the process started is Wrap[0] with Wrap[1:],
	// the binary and its arguments. Signal, Stop and Kill then reach the
	// wrapper (Kill reaches the whole process group).
	Wrap []string
}

// StartGateway writes a Caddyfile and runs `caddy run` on it. If site does
// not contain "{{ADDR}}", it is wrapped in a site block
// `http://127.0.0.1:PORT { … }`; otherwise {{ADDR}} is replaced by
// 127.0.0.1:PORT and {{PORT}} by the port. A global block (admin off,
// persist_config off, grace_period 1s, http_port PORT, plus Options.Global)
// is prepended. The process is stopped at cleanup; its output is logged on
// failure.
func StartGateway(t testing.TB, site string) *Gateway {
	return StartGatewayWith(t, site, Options{})
}

// StartGatewayWith is StartGateway with options.
func StartGatewayWith(t testing.TB, site string, opts Options) *Gateway {
	t.Helper()
	dir := t.TempDir()
	port := FreePort(t)
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	// The HTTPS port must differ from the site's: the kernel may hand the
	// same free port out twice (Caddy then refuses an http:// site on it).
	httpsPort := FreePort(t)
	for httpsPort == port {
		httpsPort = FreePort(t)
	}
	g := &Gateway{
		URL: "http://" + addr, Addr: addr, Port: port, Dir: dir, ConfigPath: filepath.Join(dir, "Caddyfile"),
		t: t, env: Env(dir, append(raceEnv(), opts.Env...)...), out: &SyncBuffer{}, opts: opts, httpsPort: httpsPort,
	}
	g.HTTPSPort = g.httpsPort
	if opts.Admin {
		g.adminAddr = fmt.Sprintf("127.0.0.1:%d", FreePort(t))
		g.AdminURL = "http://" + g.adminAddr
	}
	g.Rewrite(site)
	t.Cleanup(func() {
		g.Stop()
		// A race-built gateway (A2A_E2E_RACE=1) that saw a data race fails
		// the test, whatever the test checked (issue 33.1).
		if raceFound(g.out.String()) {
			t.Errorf("the gateway reported a data race (race-built binary); its output is below")
		}
		if t.Failed() {
			cur, _ := os.ReadFile(g.ConfigPath)
			t.Logf("caddy output (%s):\n%s\nCaddyfile:\n%s", addr, g.out.String(), cur)
		}
	})
	g.start()
	if !opts.NoHealthWait {
		if err := g.waitHealthy(g.startTimeout()); err != nil {
			t.Fatalf("gateway did not become healthy: %v\noutput:\n%s", err, g.out.String())
		}
	}
	return g
}

// startTimeout is Options.StartTimeout or its default.
func (g *Gateway) startTimeout() time.Duration {
	if g.opts.StartTimeout > 0 {
		return g.opts.StartTimeout
	}
	return 15 * time.Second
}

// caddyfile renders the whole Caddyfile for site (see StartGateway).
func (g *Gateway) caddyfile(site string) string {
	body := site
	if !strings.Contains(site, "{{ADDR}}") && !strings.Contains(site, "{{HTTPS_PORT}}") {
		body = "http://{{ADDR}} {\n" + site + "\n}\n"
	}
	repl := strings.NewReplacer("{{ADDR}}", g.Addr, "{{PORT}}", fmt.Sprint(g.Port), "{{HTTPS_PORT}}", fmt.Sprint(g.httpsPort), "{{DIR}}", g.Dir)
	body = repl.Replace(body)
	admin := "admin off"
	if g.adminAddr != "" {
		admin = "admin " + g.adminAddr
	}
	grace := g.opts.GracePeriod
	if grace == 0 {
		grace = time.Second
	}
	global := ""
	if g.opts.Global != "" {
		global = "\t" + strings.ReplaceAll(repl.Replace(g.opts.Global), "\n", "\n\t") + "\n"
	}
	return fmt.Sprintf("{\n\t%s\n\tpersist_config off\n\tgrace_period %s\n\thttp_port %d\n\thttps_port %d\n\tskip_install_trust\n%s}\n\n%s",
		admin, grace, g.Port, g.httpsPort, global, body)
}

// Reload replaces the running configuration through the admin endpoint's
// /load (Options.Admin must be set) with the Caddyfile built from site the
// way StartGateway builds it (same ports, global options and directory);
// the file at ConfigPath is rewritten too, so Restart keeps the new
// config. It fails the test when the admin endpoint refuses the config.
func (g *Gateway) Reload(site string) {
	g.t.Helper()
	if g.AdminURL == "" {
		g.t.Fatal("harness: Reload needs Options.Admin")
	}
	cfg := g.Rewrite(site)
	req, _ := http.NewRequest(http.MethodPost, g.AdminURL+"/load", strings.NewReader(cfg))
	req.Header.Set("Content-Type", "text/caddyfile")
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		g.t.Fatalf("reload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		g.t.Fatalf("reload: HTTP %d: %s", resp.StatusCode, b)
	}
	g.settle()
}

// Rewrite writes the Caddyfile built from site (as StartGateway builds it)
// to ConfigPath, for the next Start or Restart, and returns it.
func (g *Gateway) Rewrite(site string) string {
	g.t.Helper()
	cfg := g.caddyfile(site)
	if err := os.WriteFile(g.ConfigPath, []byte(cfg), 0o600); err != nil {
		g.t.Fatal(err)
	}
	return cfg
}

// settle waits until new connections reach the server of the new config:
// Caddy's shared listener can hand a connection accepted at the moment of
// a reload to the old server, which then closes it unanswered (EOF or
// reset; it happens with a plain respond route too). Three answered
// requests in a row on new connections, or 2s, are enough.
func (g *Gateway) settle() {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	ok := 0
	for deadline := time.Now().Add(2 * time.Second); ok < 3 && time.Now().Before(deadline); {
		resp, err := client.Get(g.URL + "/health")
		if err != nil {
			ok = 0
			time.Sleep(10 * time.Millisecond)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		ok++
	}
}

// Signal sends sig to the caddy process (not its group).
func (g *Gateway) Signal(sig syscall.Signal) {
	g.t.Helper()
	if g.cmd == nil || g.cmd.Process == nil {
		g.t.Fatal("harness: no process")
	}
	if err := g.cmd.Process.Signal(sig); err != nil {
		g.t.Fatalf("signal %v: %v", sig, err)
	}
}

// WaitExit waits up to d for the process to exit and reports whether it did.
func (g *Gateway) WaitExit(d time.Duration) bool {
	select {
	case <-g.done:
		return true
	case <-time.After(d):
		return false
	}
}

// Exited is closed when the process has exited.
func (g *Gateway) Exited() <-chan struct{} { return g.done }

// Start starts the process again after it exited (e.g. after Signal and
// WaitExit) on the same port, config and data, waiting for /health.
func (g *Gateway) Start() {
	g.t.Helper()
	select {
	case <-g.done:
	default:
		g.t.Fatal("harness: Start while the process runs")
	}
	g.start()
	if err := g.waitHealthy(g.startTimeout()); err != nil {
		g.t.Fatalf("gateway did not become healthy after start: %v\noutput:\n%s", err, g.out.String())
	}
}

func (g *Gateway) start() {
	g.t.Helper()
	args := []string{binPath, "run", "--config", g.ConfigPath, "--adapter", "caddyfile"}
	if len(g.opts.Wrap) > 0 {
		args = append(append([]string{}, g.opts.Wrap...), args...)
	}
	g.cmd = exec.Command(args[0], args[1:]...)
	g.cmd.Dir = g.Dir
	g.cmd.Env = g.env
	g.cmd.Stdout = g.out
	g.cmd.Stderr = g.out
	g.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if binPath == "" {
		g.t.Fatal("harness: binary not built; call harness.Main from TestMain")
	}
	if err := g.cmd.Start(); err != nil {
		g.t.Fatalf("starting caddy: %v", err)
	}
	g.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) {
		_ = cmd.Wait()
		close(done)
	}(g.cmd, g.done)
}

func (g *Gateway) waitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: time.Second}
	path := g.opts.ReadyPath
	if path == "" {
		path = "/health"
	}
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-g.done:
			return fmt.Errorf("caddy exited: %v", g.cmd.ProcessState)
		default:
		}
		resp, err := client.Get(g.URL + path)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("status %d", resp.StatusCode)
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("timeout after %v: %v", timeout, last)
}

// Output returns everything the process wrote so far.
func (g *Gateway) Output() string { return g.out.String() }

// Stop sends SIGINT and waits; after 10s it sends SIGKILL. Safe to call
// twice.
func (g *Gateway) Stop() { g.StopWithin(10 * time.Second) }

// StopWithin sends SIGINT and waits up to d for the process to exit; after
// d it sends SIGKILL to the process group, waits, and returns false. It
// returns true when the process exited in time or was not running.
func (g *Gateway) StopWithin(d time.Duration) bool {
	if g.cmd == nil || g.cmd.Process == nil {
		return true
	}
	select {
	case <-g.done:
		return true
	default:
	}
	_ = g.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-g.done:
		return true
	case <-time.After(d):
		_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
		<-g.done
		return false
	}
}

// Kill sends SIGKILL to the process group (a crash) and waits for it.
func (g *Gateway) Kill() {
	if g.cmd == nil || g.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	<-g.done
}

// Restart stops the process if it runs (gracefully) and starts it again
// on the same port, config and data, waiting for /health.
func (g *Gateway) Restart() {
	g.t.Helper()
	g.Stop()
	g.start()
	if err := g.waitHealthy(g.startTimeout()); err != nil {
		g.t.Fatalf("gateway did not become healthy after restart: %v\noutput:\n%s", err, g.out.String())
	}
}

// Run runs the caddy binary with args in an isolated environment and
