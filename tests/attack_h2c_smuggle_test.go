package tests

// Attack (issue 26, "not attacked yet"): h2c smuggling through a fronting
// proxy. A client sends `Upgrade: h2c` + `HTTP2-Settings` on a path the
// proxy allows, hoping the gateway answers 101 and the proxy turns the
// connection into a raw tunnel to the gateway, past the proxy's path
// rules and the gateway's a2a_auth. The gateway (protocols h1 h2 h2c)
// serves h2c by prior knowledge only: an upgrade request is answered as
// a plain HTTP/1.1 request, so no tunnel opens.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// smuggleOnce sends one HTTP/1.1 request with the given upgrade headers
// to addr, then writes an HTTP/2 preface and a request for smugglePath on
// the same connection. It returns the first response's status and
// whether anything that reads as an HTTP/2 frame (a tunnel to an h2
// server) came back after it.
func smuggleOnce(t *testing.T, addr, method, path, upgrade, smugglePath, auth string) (status int, tunnelled bool) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", method, path, addr)
	switch upgrade {
	case "h2c":
		b.WriteString("Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n")
	case "websocket":
		b.WriteString("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
	}
	if auth != "" {
		b.WriteString("Authorization: Bearer " + auth + "\r\n")
	}
	body := ""
	if method == http.MethodPost {
		body = `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
		b.WriteString("Content-Type: application/json\r\nA2A-Version: 1.0\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n%s", len(body), body)
	if _, err := conn.Write([]byte(b.String())); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s %s (upgrade %q): %v", method, path, upgrade, err)
	}
	status = resp.StatusCode
	if status != http.StatusSwitchingProtocols {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	}
	_ = resp.Body.Close()
	// Speak HTTP/2 on the (possibly tunnelled) connection.
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	for _, f := range [][2]string{{":method", "GET"}, {":scheme", "http"}, {":authority", addr}, {":path", smugglePath}} {
		_ = enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	if auth != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: "authorization", Value: "Bearer " + auth})
	}
	_, _ = conn.Write([]byte(http2.ClientPreface))
	fr := http2.NewFramer(conn, br)
	_ = fr.WriteSettings()
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: true})
	_ = conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	peek, _ := br.Peek(9)
	// An HTTP/1.1 answer starts "HTTP/1.1"; a closed connection gives
	// nothing; an h2 server's first frame is SETTINGS (type 4).
	tunnelled = len(peek) == 9 && !bytes.HasPrefix(peek, []byte("HTTP/")) && peek[3] == byte(http2.FrameSettings)
	return status, tunnelled
}

// TestAttackH2CSmuggling (XPORT-2, AUTH-1, issue 26): 24 variants — a
// Caddy reverse_proxy (our binary) and Go's httputil.ReverseProxy in
// front of a gateway with bearer auth and protocols h1 h2 h2c, plus the
// gateway itself; GET and POST with `Upgrade: h2c` (and `Upgrade:
// websocket`) on allowed paths, with and without a credential. None
// answers 101, none opens a tunnel, and the paths the proxies block stay
// blocked; unauthenticated upgrades to the gateway are 401.
func TestAttackH2CSmuggling(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name h2c-smuggle
	}
	auth {
		bearer smuggle-token
	}
	grpc
	websocket /ws
}`, harness.Options{Global: "servers {\n\tprotocols h1 h2 h2c\n}"})
	// Caddy in front: only the card and /health pass.
	front := harness.StartGateway(t, `http://{{ADDR}} {
	handle /.well-known/* {
		reverse_proxy `+gw.Addr+`
	}
	handle /health {
		reverse_proxy `+gw.Addr+`
	}
	handle {
		respond "blocked by the proxy" 403
	}
}`)
	// Go's ReverseProxy in front, with the same rule.
	target, _ := url.Parse(gw.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	goFront := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" && !strings.HasPrefix(r.URL.Path, "/.well-known/") {
			http.Error(w, "blocked by the proxy", http.StatusForbidden)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(goFront.Close)

	variants := 0
	for _, p := range []struct{ name, addr string }{{"caddy reverse_proxy", front.Addr}, {"httputil.ReverseProxy", goFront.Listener.Addr().String()}} {
		for _, path := range []string{"/health", "/.well-known/agent-card.json"} {
			for _, up := range []string{"h2c", "websocket"} {
				for _, auth := range []string{"", "smuggle-token"} {
					variants++
					st, tun := smuggleOnce(t, p.addr, http.MethodGet, path, up, "/tasks", auth)
					if st == http.StatusSwitchingProtocols || tun {
						t.Fatalf("%s, GET %s with Upgrade %s (auth %v): status %d, tunnel %v — the upgrade reached past the proxy", p.name, path, up, auth != "", st, tun)
					}
				}
			}
		}
		// A blocked path stays blocked with the upgrade headers.
		variants++
		if st, tun := smuggleOnce(t, p.addr, http.MethodPost, "/", "h2c", "/tasks", "smuggle-token"); st != http.StatusForbidden || tun {
			t.Fatalf("%s: POST / with Upgrade h2c: status %d tunnel %v, want the proxy's 403", p.name, st, tun)
		}
	}
	// The gateway itself: an h2c upgrade is a plain request, so auth
	// applies (401 without a credential) and nothing switches protocols.
	for _, c := range []struct {
		method, path, auth string
		want               int
	}{
		{http.MethodPost, "/", "", http.StatusUnauthorized},
		{http.MethodGet, "/tasks", "", http.StatusUnauthorized},
		{http.MethodPost, "/", "smuggle-token", http.StatusOK},
		{http.MethodGet, "/ws", "", http.StatusUnauthorized},
	} {
		variants++
		st, tun := smuggleOnce(t, gw.Addr, c.method, c.path, "h2c", "/tasks", "")
		if c.auth != "" {
			st, tun = smuggleOnce(t, gw.Addr, c.method, c.path, "h2c", "/tasks", c.auth)
		}
		if st != c.want || tun {
			t.Fatalf("gateway: %s %s with Upgrade h2c (auth %v): status %d tunnel %v, want %d and no tunnel", c.method, c.path, c.auth != "", st, tun, c.want)
		}
	}
	t.Logf("%d variants: no 101, no tunnel, proxy rules and auth held", variants)
}
