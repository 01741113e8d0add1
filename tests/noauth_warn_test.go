package tests

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// waitStarted waits until Caddy reports the configuration as served (every
// app started) and returns the output so far.
func waitStarted(t *testing.T, gw *harness.Gateway) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		out := gw.Output()
		if strings.Contains(out, "serving initial configuration") {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 'serving initial configuration' in the output:\n%s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

const noAuthWarning = "no `auth` is configured"

// TestNoAuthWarning covers AUTH-6's last sentence: a site listening beyond
// loopback with no auth logs one warning at start naming the listener;
// loopback-only sites, and sites with auth, log none.
func TestNoAuthWarning(t *testing.T) {
	t.Parallel()
	const agentBlock = "a2a {\n\t\tcard {\n\t\t\tname warn\n\t\t}\n\t%s}"
	site := func(bind, auth string) string {
		return "http://{{ADDR}} {\n\tbind " + bind + "\n\t" + fmt.Sprintf(agentBlock, auth) + "\n}\n"
	}
	t.Run("all interfaces, no auth", func(t *testing.T) {
		gw := harness.StartGateway(t, site("0.0.0.0", ""))
		waitStarted(t, gw)
		var out string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if out = gw.Output(); strings.Contains(out, noAuthWarning) {
				break
			}
		}
		var lines []string
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, noAuthWarning) {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 || !strings.Contains(lines[0], `"level":"warn"`) || !strings.Contains(lines[0], fmt.Sprintf("0.0.0.0:%d", gw.Port)) {
			t.Fatalf("want one warn line naming 0.0.0.0:%d, got %d:\n%s", gw.Port, len(lines), out)
		}
	})
	// noWarning fails the test when the site on host with auth warns.
	noWarning := func(t *testing.T, host, auth, what string) {
		t.Helper()
		gw := harness.StartGateway(t, site(host, auth))
		out := waitStarted(t, gw)
		time.Sleep(300 * time.Millisecond) // sleep: room for a warning, which must not come
		if out = gw.Output(); strings.Contains(out, noAuthWarning) {
			t.Fatalf("%s warned:\n%s", what, out)
		}
	}
	t.Run("loopback, no auth", func(t *testing.T) {
		noWarning(t, "127.0.0.1", "", "loopback-only site")
	})
	t.Run("all interfaces, auth", func(t *testing.T) {
		noWarning(t, "0.0.0.0", "auth {\n\t\t\tbearer s3cret\n\t\t}\n\t", "site with auth")
	})
}
