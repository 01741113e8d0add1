package ws

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestConnectionEndsAtCredentialExpiry (AUTH-10, issue 26.2): a
// connection opened with a credential that expires is closed with 1008
// at the expiry, although pings keep it alive and a stream is open; a
// request frame read after the expiry is refused with -31401.
func TestConnectionEndsAtCredentialExpiry(t *testing.T) {
	h, _ := newTestHandler(t, Config{})
	expires := time.Now().Add(800 * time.Millisecond)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeUntil(w, r, "alice", expires) }))
	t.Cleanup(srv.Close)
	c := dial(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws")
	defer c.CloseNow()
	startStream(t, c, "s1") // a 1 s stream: still running at the expiry
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, _, err := c.Read(ctx)
		if err == nil {
			continue
		}
		if websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Fatalf("connection ended with %v, want close status 1008", err)
		}
		if time.Now().Before(expires) {
			t.Fatalf("closed before the expiry")
		}
		break
	}
	// The refusal of a frame read after the expiry.
	cn := &conn{expires: time.Now().Add(-time.Second)}
	if !cn.expired() || (&conn{}).expired() || errExpired.Reason() != "UNAUTHENTICATED" {
		t.Fatalf("expiry rule: expired %v, zero %v, reason %s", cn.expired(), (&conn{}).expired(), errExpired.Reason())
	}
}
