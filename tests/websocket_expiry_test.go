package tests

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

const wsJWTSecret = "ws-expiry-jwt-secret-abcdefghijklmnop"

// wsJWTSite is a WebSocket site accepting HS256 JWTs with a 1 s clock
// skew and the static bearer token (when token is not "").
func wsJWTSite(token string) string {
	return expirySite("ws-expiry", token, "keep_alive 1s\n\twebsocket")
}

// expirySite is the site of the credential-expiry tests: an agent named
// name accepting HS256 JWTs of wsJWTSecret with a 1 s clock skew and the
// static bearer token (when token is not ""), whose echo turns stream for
// 10 s, with carrier (e.g. "grpc") in its a2a block.
func expirySite(name, token, carrier string) string {
	bearer := ""
	if token != "" {
		bearer = "bearer " + token
	}
	return `a2a {
	card {
		name ` + name + `
	}
	auth {
		no_env
		` + bearer + `
		jwt {
			secret {env.WS_JWT_SECRET}
			issuer https://issuer.example.com
			audience caddy-a2a
			clock_skew 1s
		}
	}
	backend echo {
		chunks 100
		delay 100ms
	}
	` + carrier + `
}`
}

// TestWebSocketCredentialExpiry (AUTH-10, issue 26.2): a WebSocket
// connection does not outlive its credential. With a JWT whose exp is 3 s
// away (clock_skew 1s) calls succeed at first; 6 s later (server pings
// every second meanwhile) the connection has been closed with 1008 and a
// new upgrade with the token gets 401; an SSE stream opened with such a
// JWT ends at the expiry as well. A connection with a static token
// is closed when a reload removes the token, and the token is refused
// afterwards.
func TestWebSocketCredentialExpiry(t *testing.T) {
	gw := harness.StartGatewayWith(t, wsJWTSite("ws-static-token-0123"), harness.Options{Admin: true, Env: []string{"WS_JWT_SECRET=" + wsJWTSecret}})
	tok := trustJWT(t, wsJWTSecret, "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(3*time.Second))
	hdr := http.Header{"Authorization": {"Bearer " + tok}, "A2A-Version": {"1.0"}}
	w := dialWS(t, wsURL(gw.URL, "/ws"), hdr, nil)
	w.request("a", "ListTasks", map[string]any{}, nil)
	if fs := w.waitFinal(`"a"`, 10*time.Second); len(fs) != 1 || fs[0].Payload == nil || fs[0].Payload.Error != nil {
		t.Fatalf("ListTasks with a fresh JWT: %v", fs)
	}
	time.Sleep(6 * time.Second) // sleep: the JWT must expire (elapsed time is tested)
	// Either the connection is gone (closed with 1008 at exp+skew) or a
	// frame is refused with -31401; never served.
	select {
	case <-w.done:
	default:
		w.request("b", "ListTasks", map[string]any{}, nil)
	}
	err := w.closed(10 * time.Second)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != websocket.StatusPolicyViolation {
		t.Fatalf("6 s after the JWT expired: %v, want the connection closed with 1008", err)
	}
	for _, f := range w.all() {
		if string(f.ID) == `"b"` && (f.Payload == nil || f.Payload.Error == nil || f.Payload.Error.Code != -31401) {
			t.Fatalf("a frame after the expiry was served: %s", f.raw)
		}
	}
	if c, resp, err := wsDial(gw.URL, hdr); err == nil || resp == nil || resp.StatusCode != 401 {
		if c != nil {
			_ = c.CloseNow()
		}
		t.Fatalf("upgrade with the expired JWT: %v %v, want 401", err, resp)
	}

	// An SSE stream opened with a JWT ends at its expiry too (the request's
	// context ends then), long before the 10 s turn would have.
	sseTok := trustJWT(t, wsJWTSecret, "https://issuer.example.com", "caddy-a2a", "alice", time.Now().Add(3*time.Second))
	start := time.Now()
	st := harness.At(gw.URL+"/", harness.Bearer(sseTok)).Stream(t, "SendStreamingMessage", wsMessage("a prompt long enough to stream for ten seconds"))
	evs := st.Rest(9 * time.Second)
	if took := time.Since(start); took > 7*time.Second || len(evs) == 0 {
		t.Fatalf("SSE stream with a 3 s JWT: %d events over %v, want it ended at the expiry", len(evs), took)
	}

	// A static token removed by a reload ends the connection's access.
	static := http.Header{"Authorization": {"Bearer ws-static-token-0123"}, "A2A-Version": {"1.0"}}
	w2 := dialWS(t, wsURL(gw.URL, "/ws"), static, nil)
	w2.request("c", "ListTasks", map[string]any{}, nil)
	if fs := w2.waitFinal(`"c"`, 10*time.Second); len(fs) != 1 || fs[0].Payload == nil || fs[0].Payload.Error != nil {
		t.Fatalf("ListTasks with the static token: %v", fs)
	}
	gw.Reload(wsJWTSite(""))
	if err := w2.closed(15 * time.Second); err == nil {
		t.Fatal("the connection of a removed token is still open after the reload")
	}
	if c, resp, err := wsDial(gw.URL, static); err == nil || resp == nil || resp.StatusCode != 401 {
		if c != nil {
			_ = c.CloseNow()
		}
		t.Fatalf("upgrade with the removed token: %v %v, want 401", err, resp)
	}
	if strings.Contains(gw.Output(), tok) {
		t.Fatal("the log holds the JWT")
	}
}

// wsDial attempts an upgrade at base's /ws with hdr.
func wsDial(base string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return websocket.Dial(ctx, wsURL(base, "/ws"), &websocket.DialOptions{HTTPHeader: hdr})
}
