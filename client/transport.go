package client

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Transport carries the A2A operations over one protocol binding. Every
// call takes the method name and its JSON-RPC params (the request message
// of the operation); the binding renders them onto its wire.
type Transport interface {
	// Call runs a unary method and decodes its result into out (nil:
	// the result is discarded).
	Call(ctx context.Context, method string, params, out any) error
	// Stream runs a streaming method and calls fn for each event until
	// the stream ends (nil), fn returns an error, or ctx ends.
	Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error
	// Close releases the connections the transport holds.
	Close() error
}

// newTransport returns the transport of the interface's binding (the
// interface was chosen by SelectInterface, so its binding is one the
// client speaks).
func newTransport(in a2a.AgentInterface, opts Options, hc *http.Client) (Transport, error) {
	ids := new(atomic.Int64)
	switch strings.ToUpper(in.ProtocolBinding) {
	case a2a.BindingGRPC:
		return dialGRPC(in, opts, hc)
	case strings.ToUpper(a2a.BindingGRPCJSONRPC):
		return dialGRPCJSONRPC(in, opts, hc, ids) // XPORT-6
	case strings.ToUpper(a2a.BindingWebSocket):
		return &wsTransport{in: in, opts: opts, hc: hc, ids: ids}, nil
	case a2a.BindingHTTPJSON:
		return &restTransport{in: in, h: httpCaller{hc: hc, opts: opts, contentType: "application/a2a+json"}}, nil
	}
	return &jsonrpcTransport{url: in.URL, ids: ids, h: httpCaller{hc: hc, opts: opts, contentType: "application/json"}}, nil
}
