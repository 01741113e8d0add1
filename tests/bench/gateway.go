package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// gateway is a running bin/caddy under test.
type gateway struct {
	cmd    *exec.Cmd
	dir    string
	output bytes.Buffer
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// buildBinary builds ./cmd/caddy into dir.
func buildBinary(root, dir string) (string, error) {
	bin := filepath.Join(dir, "caddy")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/caddy")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the gateway: %v\n%s", err, out)
	}
	return bin, nil
}

// startGateway runs bin with the Caddyfile text and waits for healthURL.
func startGateway(bin, dir, caddyfile, healthURL string) (*gateway, error) {
	cfgPath := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfgPath, []byte(caddyfile), 0o600); err != nil {
		return nil, err
	}
	g := &gateway{dir: dir}
	g.cmd = exec.Command(bin, "run", "--config", cfgPath, "--adapter", "caddyfile")
	g.cmd.Dir = dir
	g.cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg-config"), "XDG_DATA_HOME="+filepath.Join(dir, "xdg-data"))
	g.cmd.Stdout = &g.output
	g.cmd.Stderr = &g.output
	if err := g.cmd.Start(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(healthURL)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return g, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	g.stop()
	return nil, fmt.Errorf("gateway did not become healthy:\n%s", g.output.String())
}

func (g *gateway) stop() {
	if g.cmd.Process == nil {
		return
	}
	_ = g.cmd.Process.Signal(syscall.SIGINT)
	done := make(chan struct{})
	go func() { _ = g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = g.cmd.Process.Kill()
		<-done
	}
}

// rssBytes reads the resident set size of the gateway process.
func (g *gateway) rssBytes() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

func gitCommit(root string) string {
	out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}
