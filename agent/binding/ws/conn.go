package ws

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/wsframe"
)

// conn is one accepted connection: a read loop (the goroutine of Serve),
// a pinger and one goroutine per request in flight, all ended by the
// connection's context.
type conn struct {
	h      *Handler
	ws     *websocket.Conn
	base   agent.Call      // from the upgrade request
	ctx    context.Context // the connection's, canceled when it ends
	cancel context.CancelFunc
	// expires is when the upgrade's credential expires (zero: never);
	// see ServeUntil (AUTH-10).
	expires time.Time

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by frame id (non-null ids)
	wg       sync.WaitGroup
	slots    int
	closing  sync.Once
}

// run serves the connection until the peer goes away, a read fails (a
// message over the limit closes it with 1009) or the handler is closed,
// then ends every request and the pinger before returning.
func (c *conn) run() {
	ctx := c.ctx
	defer func() {
		c.cancel()
		c.wg.Wait()
		_ = c.ws.CloseNow()
	}()
	c.wg.Add(1)
	go c.ping(ctx)
	if !c.expires.IsZero() {
		c.wg.Add(1)
		go c.expireAt(ctx)
	}
	for {
		typ, data, err := c.ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			c.refuse(nil, errNotText)
			continue
		}
		c.handle(ctx, data)
	}
}

// ping sends a WebSocket ping every keep-alive interval; a peer that does
// not answer within the interval is disconnected.
func (c *conn) ping(ctx context.Context) {
	defer c.wg.Done()
	t := time.NewTicker(c.h.cfg.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, c.h.cfg.KeepAlive)
		err := c.ws.Ping(pctx)
		cancel()
		if err != nil {
			c.cancel()
			return
		}
	}
}

// shutdown closes the connection with status 1001 (server going away)
// without blocking the caller.
func (c *conn) shutdown() {
	c.closing.Do(func() {
		go func() {
			_ = c.ws.Close(websocket.StatusGoingAway, "server shutting down")
			c.cancel()
		}()
	})
}

// send writes one frame, bounded by the write timeout; a failed write
// ends the connection (and is returned).
func (c *conn) send(frame []byte) error {
	wctx, cancel := context.WithTimeout(c.ctx, c.h.cfg.WriteTimeout)
	defer cancel()
	err := c.ws.Write(wctx, websocket.MessageText, frame)
	if err != nil {
		c.cancel()
	}
	return err
}

// acquire takes an in-flight slot for a request with frame id key ("" for
// a null id); false (with the reason) when the connection is at its limit
// or the id is in flight already.
func (c *conn) acquire(key string, cancel context.CancelFunc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.slots >= c.h.cfg.MaxInFlight {
		return errTooMany(c.h.cfg.MaxInFlight)
	}
	if key != "" {
		if _, dup := c.inflight[key]; dup {
			return errDuplicateID
		}
		c.inflight[key] = cancel
	}
	c.slots++
	return nil
}

// release frees the slot taken by acquire.
func (c *conn) release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slots--
	if key != "" {
		delete(c.inflight, key)
	}
}

// cancelRequest stops the request in flight with frame id key, if any.
func (c *conn) cancelRequest(key string) {
	c.mu.Lock()
	cancel := c.inflight[key]
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// pump sends every event of a stream as a frame, then the final frame,
// through the dispatcher's Pump (its order: the stream is closed and no
// longer counted open, then release frees the request's slot, then the
// final frame). A failed write ends the connection and with it the
// stream; the final frame is sent on a client's cancel too (the
// connection is still there), not once the connection is gone.
func (c *conn) pump(ctx context.Context, id []byte, out jsonrpc.Outcome, release func()) {
	_ = c.h.d.Pump(ctx, out, jsonrpc.Carrier{
		Send: func(frame []byte) error { return c.send(wsframe.Encode(id, frame, false)) },
		Final: func(json.RawMessage, bool) error {
			if c.ctx.Err() != nil {
				return c.ctx.Err()
			}
			return c.send(wsframe.Encode(id, nil, true))
		},
		Released: release,
	})
}
