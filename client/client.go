package client

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
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
	// Binding forces "jsonrpc", "rest", "grpc", "grpc-jsonrpc" or
	// "websocket"; "" picks the card's first
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

	t Transport // the selected interface's binding
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
	t, err := newTransport(in, opts, hc)
	if err != nil {
		return nil, err
	}
	return &Client{Card: card, CardRaw: raw, Interface: in, t: t}, nil
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

// Close releases the client's connections (the gRPC or WebSocket
// connection; the HTTP bindings hold nothing to close).
func (c *Client) Close() error { return c.t.Close() }

// Streaming reports whether the card declares streaming support.
func (c *Client) Streaming() bool {
	return c.Card.Capabilities.Streaming != nil && *c.Card.Capabilities.Streaming
}
