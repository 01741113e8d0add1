package ws

import (
	"context"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// errExpired refuses a request frame sent after the connection's
// credential expired (AUTH-10).
var errExpired = &a2a.Error{Code: a2a.CodeUnauthenticated, Message: "Unauthorized: the credential of this WebSocket connection has expired; reconnect with a fresh one"}

// ServeUntil is Serve for a credential valid until expires (zero: no
// expiry, as Serve): a connection does not outlive the credential it was
// opened with (AUTH-10). Request frames read after expires are refused
// with an UNAUTHENTICATED error frame (-31401), and at expires the
// connection is closed with status 1008 (policy violation), which ends
// its streams like a disconnect.
func (h *Handler) ServeUntil(w http.ResponseWriter, r *http.Request, principal string, expires time.Time) {
	h.serve(w, r, principal, expires)
}

// expired reports whether the connection's credential has expired.
func (c *conn) expired() bool {
	return !c.expires.IsZero() && !time.Now().Before(c.expires)
}

// expireAt closes the connection with 1008 when its credential expires,
// unless the connection ends first.
func (c *conn) expireAt(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTimer(time.Until(c.expires))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	c.closing.Do(func() {
		go func() {
			_ = c.ws.Close(websocket.StatusPolicyViolation, "credential expired")
			c.cancel()
		}()
	})
}
