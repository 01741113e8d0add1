package ws

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/httpx"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
)

// closeWait bounds how long Close waits for the connections to end.
const closeWait = 10 * time.Second

// Handler serves the WebSocket binding of a jsonrpc.Dispatcher on
// Config.Path. Close ends every connection it accepted.
type Handler struct {
	tc  httpx.TransportConfig
	cfg Config
	d   *jsonrpc.Dispatcher

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// New returns the WebSocket binding of d with the transport settings tc
// and the binding settings cfg (defaults applied to both).
func New(d *jsonrpc.Dispatcher, tc httpx.TransportConfig, cfg Config) *Handler {
	tc = tc.WithDefaults()
	if cfg.Tenants != nil {
		d = d.WithTenants(cfg.Tenants) // TURN-10
	}
	return &Handler{
		tc:    tc,
		cfg:   cfg.WithDefaults(tc.KeepAlive, tc.MaxBodyBytes),
		d:     d,
		conns: map[*conn]struct{}{},
	}
}

// Config returns the handler's effective settings.
func (h *Handler) Config() Config { return h.cfg }

// Handles reports whether r is for this binding: its path is the upgrade
// path (any method; a request that is not a valid upgrade is refused by
// Serve).
func (h *Handler) Handles(r *http.Request) bool { return r.URL.Path == h.cfg.Path }

// Serve upgrades r for the authenticated principal ("" when auth is off)
// and serves the connection until it ends (XPORT-3). The upgrade
// request's A2A-Version and A2A-Extensions headers (or query parameter)
// apply to every request of the connection whose frame has no headers of
// its own. A request that is not a valid upgrade is answered with an HTTP
// error (405, 426 or 403 for a foreign Origin).
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, principal string) {
	h.serve(w, r, principal, time.Time{})
}

// serve is Serve and ServeUntil: expires is the credential's expiry
// (zero: none).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, principal string, expires time.Time) {
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: h.cfg.OriginPatterns})
	if err != nil {
		return // Accept has answered the request
	}
	c.SetReadLimit(h.cfg.MaxMessageBytes)
	ctx, cancel := context.WithCancel(context.Background())
	cn := &conn{h: h, ws: c, base: h.tc.NewCall(r, agent.BindingWebSocket, principal, ""), ctx: ctx, cancel: cancel, inflight: map[string]context.CancelFunc{}, expires: expires}
	if !h.track(cn) {
		cancel()
		_ = c.Close(websocket.StatusGoingAway, "server shutting down")
		return
	}
	defer h.untrack(cn)
	cn.run()
}

// track registers a connection; false once the handler is closed.
func (h *Handler) track(c *conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.conns[c] = struct{}{}
	h.wg.Add(1)
	return true
}

// untrack forgets a connection that has ended.
func (h *Handler) untrack(c *conn) {
	h.mu.Lock()
	delete(h.conns, c)
	h.mu.Unlock()
	h.wg.Done()
}

// Close refuses new connections and closes the open ones with status
// 1001 (going away), on shutdown or reload: their streams are closed (the
// turns follow the rules of a client that disconnected). It waits a
// bounded time for every connection's goroutines to end.
func (h *Handler) Close() error {
	h.mu.Lock()
	h.closed = true
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
	}
	h.mu.Unlock()
	for _, c := range conns {
		c.shutdown()
	}
	done := make(chan struct{})
	go func() { h.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	return nil
}
