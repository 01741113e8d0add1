package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/wsframe"
)

// BindingWebSocket forces the WebSocket JSON-RPC interface (XPORT-3).
const BindingWebSocket = "websocket"

// wsTransport is the WebSocket JSON-RPC binding: one connection, dialed
// on first use, carrying every call as frames told apart by id.
type wsTransport struct {
	in   a2a.AgentInterface
	opts Options
	hc   *http.Client
	ids  *atomic.Int64

	mu  sync.Mutex
	wsc *wsConn // the connection, dialed on first use
}

// Close implements Transport: it closes the connection, if one is open.
func (c *wsTransport) Close() error {
	c.mu.Lock()
	w := c.wsc
	c.wsc = nil
	c.mu.Unlock()
	if w == nil {
		return nil
	}
	return w.c.Close(websocket.StatusNormalClosure, "")
}

// wsConn is the one connection of a client over the WebSocket binding;
// its requests run concurrently, told apart by frame id.
type wsConn struct {
	c       *websocket.Conn
	mu      sync.Mutex
	waiters map[string]chan wsframe.Response
	done    chan struct{}
	err     error
}

// wsConnection returns the client's connection, dialing it on first use
// (the upgrade carries the auth, the headers and A2A-Version).
func (c *wsTransport) wsConnection(ctx context.Context) (*wsConn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wsc != nil {
		select {
		case <-c.wsc.done:
		default:
			return c.wsc, nil
		}
	}
	h := http.Header{}
	for k, v := range c.opts.Headers {
		h[k] = v
	}
	c.opts.Auth.apply(h)
	h.Set("A2A-Version", a2a.ProtocolVersion)
	if c.opts.UserAgent != "" {
		h.Set("User-Agent", c.opts.UserAgent)
	}
	conn, resp, err := websocket.Dial(ctx, c.in.URL, &websocket.DialOptions{HTTPClient: c.hc, HTTPHeader: h})
	if err != nil {
		if resp != nil {
			if e := authError(resp.StatusCode, resp.Header, c.opts.Auth.sentIn(h), nil); e != nil {
				return nil, e
			}
		}
		if ctx.Err() != nil {
			return nil, &Error{Kind: KindInterrupted, Msg: "interrupted"}
		}
		return nil, transportErr("connecting to "+cardfetch.RedactURL(c.in.URL), err)
	}
	conn.SetReadLimit(MaxResponseSize)
	w := &wsConn{c: conn, waiters: map[string]chan wsframe.Response{}, done: make(chan struct{})}
	go w.read()
	c.wsc = w
	return w, nil
}

// read hands every frame to the waiter of its id until the connection
// ends; frames of a request nobody waits for any more are dropped.
func (w *wsConn) read() {
	defer close(w.done)
	for {
		_, b, err := w.c.Read(context.Background())
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			return
		}
		var f wsframe.Response
		if json.Unmarshal(b, &f) != nil {
			continue
		}
		w.mu.Lock()
		ch := w.waiters[string(f.ID)]
		w.mu.Unlock()
		if ch != nil {
			select {
			case ch <- f:
			case <-w.done:
			}
		}
	}
}

// wsRoundTrip sends method with params as one request and hands each
// frame answering it to each until each reports the request done, the
// connection ends or ctx is done (then the request is canceled by frame).
func (c *wsTransport) wsRoundTrip(ctx context.Context, method string, params any, each func(wsframe.Response) (bool, error)) error {
	w, err := c.wsConnection(ctx)
	if err != nil {
		return err
	}
	n := c.ids.Add(1)
	id := json.RawMessage(strconv.Quote("c" + strconv.FormatInt(n, 10)))
	payload, err := json.Marshal(jsonrpc.NewRequest(n, method, params))
	if err != nil {
		return usagef("encoding the request: %v", err)
	}
	frame, _ := json.Marshal(wsframe.Request{ID: id, Payload: payload})
	ch := make(chan wsframe.Response, 64)
	w.mu.Lock()
	w.waiters[string(id)] = ch
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		delete(w.waiters, string(id))
		w.mu.Unlock()
	}()
	if err := w.c.Write(ctx, websocket.MessageText, frame); err != nil {
		return c.wsErr(ctx, w, method, err)
	}
	for {
		select {
		case f := <-ch:
			done, err := each(f)
			if err != nil || done {
				if !f.Final {
					w.cancel(id)
				}
				return err
			}
		case <-w.done:
			return c.wsErr(ctx, w, method, w.err)
		case <-ctx.Done():
			w.cancel(id)
			return c.wsErr(ctx, w, method, ctx.Err())
		}
	}
}

// cancel asks the server to stop the request id (best effort).
func (w *wsConn) cancel(id json.RawMessage) {
	b, _ := json.Marshal(wsframe.Request{ID: id, Cancel: true})
	ctx, done := context.WithTimeout(context.Background(), 2*time.Second)
	defer done()
	_ = w.c.Write(ctx, websocket.MessageText, b)
}

// wsErr is the client error of a failed request: interrupted, timed out
// or the connection lost.
func (c *wsTransport) wsErr(ctx context.Context, w *wsConn, method string, err error) error {
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return transportErr(method+": timed out", nil)
		}
		return &Error{Kind: KindInterrupted, Msg: "interrupted"}
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == websocket.StatusMessageTooBig {
		return protocolf("%s: the request is larger than the server accepts", method)
	}
	return transportErr(method+": the WebSocket connection to "+cardfetch.RedactURL(c.in.URL)+" broke", err)
}

// Call implements Transport: a unary method over the WebSocket binding.
func (c *wsTransport) Call(ctx context.Context, method string, params, out any) error {
	return c.wsRoundTrip(ctx, method, params, func(f wsframe.Response) (bool, error) {
		if f.Payload == nil {
			return true, protocolf("%s: the server ended the request without an answer", method)
		}
		return true, decodeRPCBody(method, http.StatusOK, f.Payload, out)
	})
}

// Stream implements Transport: one event per frame until the final
// frame.
func (c *wsTransport) Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	return c.wsRoundTrip(ctx, method, params, func(f wsframe.Response) (bool, error) {
		if f.Final {
			if f.Payload != nil { // refused before the stream opened
				return true, decodeRPCBody(method, http.StatusOK, f.Payload, nil)
			}
			return true, nil
		}
		var r jsonrpc.Response
		if err := json.Unmarshal(f.Payload, &r); err != nil {
			return true, protocolf("%s: bad stream event: %v", method, err)
		}
		if r.Error != nil {
			return true, rpcErr(method, wireToA2A(r.Error))
		}
		return false, decodeEvent(method, r.Result, fn)
	})
}
