package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpcjsonrpc/envelopepb"
	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// BindingGRPCJSONRPC forces the gRPC JSON-RPC envelope interface
// (XPORT-6, protocolBinding grpc-jsonrpc).
const BindingGRPCJSONRPC = "grpc-jsonrpc"

// grpcJSONRPCTransport is the gRPC JSON-RPC envelope binding: JSON-RPC
// requests in envelopes of iac_code.a2a.transports.proto.A2AJsonRpc over
// the gRPC connection of a grpc-jsonrpc interface (TLS or h2c, as for
// GRPC).
type grpcJSONRPCTransport struct {
	g   *grpcTransport // the connection and the metadata
	c   envelopepb.A2AJsonRpcClient
	ids *atomic.Int64
}

// dialGRPCJSONRPC opens the (lazy) connection to a grpc-jsonrpc
// interface.
func dialGRPCJSONRPC(in a2a.AgentInterface, o Options, hc *http.Client, ids *atomic.Int64) (*grpcJSONRPCTransport, error) {
	g, err := dialGRPC(in, o, hc)
	if err != nil {
		return nil, err
	}
	return &grpcJSONRPCTransport{g: g, c: envelopepb.NewA2AJsonRpcClient(g.conn), ids: ids}, nil
}

// Close implements Transport.
func (t *grpcJSONRPCTransport) Close() error { return t.g.Close() }

// request is the envelope of one JSON-RPC request.
func (t *grpcJSONRPCTransport) request(method string, params any) (*envelopepb.JsonRpcEnvelope, error) {
	b, err := json.Marshal(jsonrpc.NewRequest(t.ids.Add(1), method, params))
	if err != nil {
		return nil, usagef("encoding the request: %v", err)
	}
	return &envelopepb.JsonRpcEnvelope{Payload: b}, nil
}

// Call implements Transport: A2AJsonRpc/Send.
func (t *grpcJSONRPCTransport) Call(ctx context.Context, method string, params, out any) error {
	in, err := t.request(method, params)
	if err != nil {
		return err
	}
	resp, err := t.c.Send(t.g.grpcContext(ctx), in)
	if err != nil {
		return t.g.grpcErr(ctx, method, err)
	}
	return decodeRPCBody(method, http.StatusOK, resp.GetPayload(), out)
}

// Stream implements Transport: A2AJsonRpc/Stream, one event per envelope
// until the final one (whose payload is an event, or the end frame that
// carries none).
func (t *grpcJSONRPCTransport) Stream(ctx context.Context, method string, params any, fn func(a2a.StreamResponse) error) error {
	in, err := t.request(method, params)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := t.c.Stream(t.g.grpcContext(ctx), in)
	if err != nil {
		return t.g.grpcErr(ctx, method, err)
	}
	for {
		env, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return t.g.grpcErr(ctx, method, err)
		}
		var r jsonrpc.Response
		if err := json.Unmarshal(env.GetPayload(), &r); err != nil {
			return protocolf("%s: bad stream envelope: %v", method, err)
		}
		switch {
		case r.Error != nil:
			return rpcErr(method, wireToA2A(r.Error))
		case r.Result != nil:
			if err := decodeEvent(method, r.Result, fn); err != nil {
				return err
			}
		case !env.GetFinal():
			return protocolf("%s: a stream envelope holds no result", method)
		}
		if env.GetFinal() {
			return nil
		}
	}
}
