package client

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// jsonrpcTransport is the JSON-RPC over HTTP binding: one POST per call,
// an SSE answer for a stream.
type jsonrpcTransport struct {
	url string
	ids *atomic.Int64
	h   httpCaller
}

// Call implements Transport.
func (t *jsonrpcTransport) Call(ctx context.Context, method string, params, out any) error {
	resp, err := t.h.send(ctx, http.MethodPost, t.url, jsonrpc.NewRequest(t.ids.Add(1), method, params), "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decodeRPC(method, resp, out)
}

// Stream implements Transport.
func (t *jsonrpcTransport) Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	return t.h.stream(ctx, method, t.url, jsonrpc.NewRequest(t.ids.Add(1), method, params),
		func(resp *http.Response) error { return decodeRPC(method, resp, nil) },
		func(data []byte) error { return decodeRPCEvent(method, data, fn) })
}

// Close implements Transport (nothing to release).
func (t *jsonrpcTransport) Close() error { return nil }

// decodeRPCEvent decodes one JSON-RPC stream event (a response object)
// and hands its result to fn.
func decodeRPCEvent(method string, data []byte, fn func(a2a.StreamResponse) error) error {
	var r jsonrpc.Response
	if err := json.Unmarshal(data, &r); err != nil {
		return protocolf("%s: bad stream event: %v", method, err)
	}
	if r.Error != nil {
		return rpcErr(method, wireToA2A(r.Error))
	}
	return decodeEvent(method, r.Result, fn)
}

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
