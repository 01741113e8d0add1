package tests

// OPS-9: a second gateway on an address a running one serves (Caddy binds
// with SO_REUSEPORT, so it would otherwise start and split the traffic)
// refuses to start and names the address, unless both say
// share_listeners; a config reload of the running one is not a second
// gateway.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const listenSite = "a2a {\n\tcard {\n\t\tname first\n\t}\n\tbackend echo\n}"

// secondGateway writes a Caddyfile for a gateway with its own directory
// (and so its own data dir) serving 127.0.0.1:port and a port of its own,
// and returns the command (not started) and that port's URL.
func secondGateway(t *testing.T, ctx context.Context, port int, global string) (*exec.Cmd, string) {
	t.Helper()
	dir := t.TempDir()
	own := harness.FreePort(t)
	for own == port {
		own = harness.FreePort(t)
	}
	cfg := fmt.Sprintf(`{
	admin off
	persist_config off
	grace_period 1s
	http_port %d
	%s
}
http://127.0.0.1:%d, http://127.0.0.1:%d {
	a2a {
		card {
			name second
		}
		backend echo
	}
}
`, own, global, port, own)
	path := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, harness.Binary(t), "run", "--config", path, "--adapter", "caddyfile")
	cmd.Dir = dir
	cmd.Env = harness.Env(dir)
	return cmd, fmt.Sprintf("http://127.0.0.1:%d", own)
}

// OPS-9: the second gateway exits non-zero naming the address; the first
// still serves and reloads its config without tripping over its own lock.
func TestOpsSecondGatewaySameAddressRefused(t *testing.T) {
	t.Parallel()
	first := harness.StartGatewayWith(t, listenSite, harness.Options{Admin: true})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, _ := secondGateway(t, ctx, first.Port, "")
	out, err := cmd.CombinedOutput()
	if err == nil || cmd.ProcessState == nil || cmd.ProcessState.ExitCode() <= 0 {
		t.Fatalf("the second gateway did not fail (%v):\n%s", err, out)
	}
	// The site binds every interface (no bind directive): Caddy's ":PORT".
	want := fmt.Sprintf("another gateway already serves :%d", first.Port)
	if !strings.Contains(string(out), want) {
		t.Fatalf("the error does not say %q:\n%s", want, out)
	}
	first.Reload(strings.Replace(listenSite, "name first", "name first-reloaded", 1))
	if resp, err := opsClient.Get(first.URL + "/.well-known/agent-card.json"); err != nil {
		t.Fatalf("the first gateway stopped serving: %v", err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("the first gateway's card: HTTP %d", resp.StatusCode)
		}
	}
	// The reload kept the lock: a second gateway is still refused.
	cmd, _ = secondGateway(t, ctx, first.Port, "")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("after a reload, the second gateway was not refused (%v):\n%s", err, out)
	}
}

// OPS-9: with share_listeners on both, the second gateway starts.
func TestOpsSecondGatewaySharedListeners(t *testing.T) {
	t.Parallel()
	share := "a2a {\n\t\tshare_listeners\n\t}"
	first := harness.StartGatewayWith(t, listenSite, harness.Options{Global: share})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd, own := secondGateway(t, ctx, first.Port, share)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() { _ = cmd.Process.Kill(); <-done }()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("the sharing gateway exited: %v\n%s", cmd.ProcessState, out)
		default:
		}
		if resp, err := opsClient.Get(own + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the sharing gateway did not become healthy")
		}
	}
	// It stays up (a refusal would end it right after the start).
	select {
	case <-done:
		t.Fatalf("the sharing gateway exited: %v\n%s", cmd.ProcessState, out)
	case <-time.After(time.Second):
	}
}
