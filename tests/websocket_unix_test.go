package tests

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestWebSocketOverUnixSocket: the WebSocket binding over Caddy's own
// `bind unix//path` (XPORT-1, XPORT-3): the upgrade is authenticated and a
// stream and a unary call run on one connection through the socket.
func TestWebSocketOverUnixSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "gw.sock")
	gw := harness.StartGateway(t, `http://{{ADDR}} {
	bind 127.0.0.1 unix/`+sock+`
	`+wsSite+`
}`)
	unix := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	// The host in the URL is only the Host header: the dialer goes to the socket.
	u := "ws://" + strings.TrimPrefix(gw.URL, "http://") + "/ws"
	w := dialWS(t, u, wsAuth(), unix)
	w.request("s", "SendStreamingMessage", wsMessage("over a unix socket"), nil)
	w.request("l", "ListTasks", map[string]any{}, nil)
	fs := w.waitFinal(`"s"`, 15*time.Second)
	if len(fs) < 3 || !strings.Contains(fs[len(fs)-2].raw, "Echo:") && !strings.Contains(fs[len(fs)-2].raw, "TASK_STATE_INPUT_REQUIRED") {
		t.Fatalf("stream over the socket: %v", fs)
	}
	if l := w.waitFinal(`"l"`, 5*time.Second); l[0].Payload == nil || l[0].Payload.Error != nil {
		t.Fatalf("ListTasks over the socket: %s", l[0].raw)
	}
	// Unauthenticated through the socket: 401 too.
	resp, err := unix.Get(gw.URL + "/ws")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unauthenticated GET over the socket: %d, want 401", resp.StatusCode)
	}
}
