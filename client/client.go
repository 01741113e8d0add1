package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
	"github.com/caddy-a2a/caddy-a2a/internal/limitio"
	"github.com/caddy-a2a/caddy-a2a/internal/sse"
)

// Size limits for what the client reads.
const (
	// MaxCardSize bounds an Agent Card document.
	MaxCardSize = 1 << 20
	// MaxResponseSize bounds a non-streaming response body.
	MaxResponseSize = 32 << 20
	// maxErrorBody bounds the part of an error body that is decoded.
	maxErrorBody = 64 << 10
)

// Binding choices for Options.Binding.
const (
	BindingAuto    = ""
	BindingJSONRPC = "jsonrpc"
	BindingREST    = "rest"
)

// Options configure a Client.
type Options struct {
	// Auth is sent with every request except the card fetch (which is public).
	Auth Auth
	// Headers are extra request headers (sent with every request).
	Headers http.Header
	// Binding forces "jsonrpc" or "rest"; "" picks the card's first
	// interface the client speaks.
	Binding string
	// HTTPClient is used for requests; nil builds one with dial and TLS
	// handshake timeouts and no overall timeout (streams are long).
	HTTPClient *http.Client
	// UserAgent is sent as User-Agent.
	UserAgent string
	// GRPCPlaintext talks to a GRPC interface over h2c instead of TLS;
	// Dial sets it when the card was fetched over http:// (XPORT-2).
	GRPCPlaintext bool
}

// Client talks to one interface of an agent.
type Client struct {
	// Card is the discovered Agent Card.
	Card *a2a.AgentCard
	// CardRaw is the card as served.
	CardRaw []byte
	// Interface is the selected interface.
	Interface a2a.AgentInterface

	opts  Options
	hc    *http.Client
	ids   atomic.Int64
	gconn *grpc.ClientConn // the GRPC interface's connection (nil for HTTP)

	wsMu sync.Mutex
	wsc  *wsConn // the WebSocket connection, dialed on first use
}

func defaultHTTPClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	// Redirects are not followed: credentials set for the agent must not
	// travel to wherever a response points.
	return &http.Client{Transport: tr, CheckRedirect: noRedirects}
}

// noRedirects makes a client return redirect responses as they are.
func noRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// New returns a client for card over its selected interface.
func New(card *a2a.AgentCard, raw []byte, opts Options) (*Client, error) {
	in, err := SelectInterface(card, opts.Binding)
	if err != nil {
		return nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	c := &Client{Card: card, CardRaw: raw, Interface: in, opts: opts, hc: hc}
	if strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC) {
		if err := c.dialGRPC(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Dial fetches the card at target and returns a client for it.
func Dial(ctx context.Context, target string, opts Options) (*Client, error) {
	card, raw, err := FetchCard(ctx, target, opts)
	if err != nil {
		return nil, err
	}
	opts.GRPCPlaintext = opts.GRPCPlaintext || strings.HasPrefix(strings.ToLower(target), "http://")
	return New(card, raw, opts)
}

// REST reports whether the client uses the HTTP+JSON binding.
func (c *Client) REST() bool {
	return strings.EqualFold(c.Interface.ProtocolBinding, a2a.BindingHTTPJSON)
}

// Streaming reports whether the card declares streaming support.
func (c *Client) Streaming() bool {
	return c.Card.Capabilities.Streaming != nil && *c.Card.Capabilities.Streaming
}

func (c *Client) newRequest(ctx context.Context, method, u string, body any, accept string) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, Usagef("encoding the request: %v", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, protocolf("bad interface URL %q", RedactURL(u))
	}
	for k, v := range c.opts.Headers {
		req.Header[k] = v
	}
	c.opts.Auth.apply(req.Header)
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	req.Header.Set("Accept", accept)
	if body != nil {
		if c.REST() {
			req.Header.Set("Content-Type", "application/a2a+json")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if c.opts.UserAgent != "" {
		req.Header.Set("User-Agent", c.opts.UserAgent)
	}
	return req, nil
}

// send builds a request (newRequest) and sends it (do).
func (c *Client) send(ctx context.Context, method, u string, body any, accept string) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, u, body, accept)
	if err != nil {
		return nil, err
	}
	return c.do(req)
}

func (c *Client) do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			if errors.Is(ctxErr, context.DeadlineExceeded) {
				return nil, transportErr("request to "+RedactURL(req.URL.String())+" timed out", nil)
			}
			return nil, &Error{Kind: KindInterrupted, Msg: "interrupted"}
		}
		return nil, transportErr("request to "+RedactURL(req.URL.String()), cleanNetErr(err))
	}
	if e := authError(resp); e != nil {
		resp.Body.Close()
		return nil, e
	}
	return resp, nil
}

// cleanNetErr drops the repeated method and URL from *url.Error.
func cleanNetErr(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// readLimited reads r to its end, at most limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := limitio.ReadAll(r, limit)
	if limitio.IsTooLarge(err) {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, err
}

// ---- JSON-RPC ----

// wireToA2A converts a JSON-RPC error member (or a REST error body in its
// shape), keeping ErrorInfo metadata.
func wireToA2A(w *jsonrpc.Error) *a2a.Error {
	e := &a2a.Error{Code: w.Code, Message: w.Message}
	var details []struct {
		Type     string            `json:"@type"`
		Reason   string            `json:"reason"`
		Metadata map[string]string `json:"metadata"`
	}
	if json.Unmarshal(w.Data, &details) == nil {
		for _, d := range details {
			if len(d.Metadata) > 0 {
				e.Metadata = d.Metadata
			}
		}
	}
	if e.Message == "" {
		e.Message = "(no message)"
	}
	return e
}

func (c *Client) rpc(ctx context.Context, method string, params, out any) error {
	if c.WebSocket() {
		return c.wsRPC(ctx, method, params, out)
	}
	if c.gconn != nil {
		return c.grpcCall(ctx, method, params, out)
	}
	resp, err := c.send(ctx, http.MethodPost, c.Interface.URL, jsonrpc.NewRequest(c.ids.Add(1), method, params), "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeRPC(method, resp, out)
}

func decodeRPC(method string, resp *http.Response, out any) error {
	body, err := readLimited(resp.Body, MaxResponseSize)
	if err != nil {
		return transportErr(method+": reading the response", err)
	}
	return decodeRPCBody(method, resp.StatusCode, body, out)
}

// decodeRPCBody decodes a JSON-RPC response body (received with the HTTP
// status) into out, or its error.
func decodeRPCBody(method string, status int, body []byte, out any) error {
	var r jsonrpc.Response
	if err := json.Unmarshal(body, &r); err != nil || (r.Result == nil && r.Error == nil) {
		if status/100 != 2 {
			return protocolf("%s failed: HTTP %d %s", method, status, http.StatusText(status))
		}
		return protocolf("%s: the server did not answer with a JSON-RPC response", method)
	}
	if r.Error != nil {
		return rpcErr(method, wireToA2A(r.Error))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(r.Result, out); err != nil {
		return protocolf("%s: bad result: %v", method, err)
	}
	return nil
}

// ---- streaming ----

// SendStreamingMessage sends a message and calls fn for each event until the
// stream ends (nil), fn returns an error, or ctx ends.
func (c *Client) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest, fn func(a2a.StreamResponse) error) error {
	c.setTenant(&req.Tenant)
	if c.REST() {
		return c.streamREST(ctx, a2a.MethodSendStreamingMessage, "/message:stream", req, fn)
	}
	return c.streamRPC(ctx, a2a.MethodSendStreamingMessage, req, fn)
}

// SubscribeToTask streams the events of an existing task.
func (c *Client) SubscribeToTask(ctx context.Context, id string, fn func(a2a.StreamResponse) error) error {
	if c.REST() {
		return c.streamREST(ctx, a2a.MethodSubscribeToTask, "/tasks/"+url.PathEscape(id)+":subscribe", struct{}{}, fn)
	}
	return c.streamRPC(ctx, a2a.MethodSubscribeToTask, a2a.SubscribeToTaskRequest{ID: id, Tenant: c.Interface.Tenant}, fn)
}

func isEventStream(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == sse.ContentType
}

func (c *Client) streamRPC(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	if c.WebSocket() {
		return c.wsStream(ctx, method, params, fn)
	}
	if c.gconn != nil {
		return c.grpcStream(ctx, method, params, fn)
	}
	return c.stream(ctx, method, c.Interface.URL, jsonrpc.NewRequest(c.ids.Add(1), method, params),
		func(resp *http.Response) error { return decodeRPC(method, resp, nil) },
		func(data []byte) error {
			var r jsonrpc.Response
			if err := json.Unmarshal(data, &r); err != nil {
				return protocolf("%s: bad stream event: %v", method, err)
			}
			if r.Error != nil {
				return rpcErr(method, wireToA2A(r.Error))
			}
			return decodeEvent(method, r.Result, fn)
		})
}

func (c *Client) streamREST(ctx context.Context, method, path string, body any, fn func(a2a.StreamResponse) error) error {
	return c.stream(ctx, method, c.restURL(path, nil), body,
		func(resp *http.Response) error {
			b, _ := readLimited(resp.Body, maxErrorBody)
			if resp.StatusCode/100 != 2 {
				return restErr(method, resp.StatusCode, b)
			}
			return nil
		},
		func(data []byte) error {
			var st restStatus
			if json.Unmarshal(data, &st) == nil && st.Error != nil {
				return restErr(method, st.Error.Code, data)
			}
			return decodeEvent(method, data, fn)
		})
}

// stream posts body to u asking for an event stream and hands each event's
// data to event. An answer without an event stream goes to other, whose
// error is returned (a protocol error when it has none).
func (c *Client) stream(ctx context.Context, method, u string, body any, other func(*http.Response) error, event func([]byte) error) error {
	resp, err := c.send(ctx, http.MethodPost, u, body, sse.ContentType+", application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if !isEventStream(resp) {
		if err := other(resp); err != nil {
			return err
		}
		return protocolf("%s: the server answered without an event stream", method)
	}
	return readStream(ctx, method, resp.Body, event)
}

func decodeEvent(method string, data []byte, fn func(a2a.StreamResponse) error) error {
	var ev a2a.StreamResponse
	if err := json.Unmarshal(data, &ev); err != nil {
		return protocolf("%s: bad stream event: %v", method, err)
	}
	if ev.Task == nil && ev.Message == nil && ev.StatusUpdate == nil && ev.ArtifactUpdate == nil {
		return protocolf("%s: stream event holds no task, message, statusUpdate or artifactUpdate", method)
	}
	return fn(ev)
}
