package jsonrpc

import (
	"bytes"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// Streaming reports whether msg is a single call (not a batch) of a
// streaming method: SendStreamingMessage or SubscribeToTask, or their A2A
// 0.3 names when the dispatcher serves 0.3 (legacy_v03). A carrier with
// separate unary and streaming calls (the gRPC JSON-RPC envelope,
// XPORT-6) uses it to refuse a streaming method on its unary call before
// any turn starts.
func (d *Dispatcher) Streaming(msg []byte) bool {
	msg = bytes.TrimSpace(msg)
	if len(msg) == 0 || msg[0] != '{' {
		return false
	}
	call, perr := rpc.ParseCall(msg)
	if perr != nil {
		return false
	}
	if d.compat != nil {
		if m10, ok := v03.Method10(call.Method); ok {
			return isStreaming(m10)
		}
	}
	return isStreaming(call.Method)
}
