package jsonrpc

import (
	"encoding/json"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// EventFrame encodes one event of a stream as the JSON-RPC response that
// carries it (the request's id, the event as result).
func EventFrame(id json.RawMessage, ev any) []byte {
	return resultFrame(id, legacyEvent(ev))
}

// EndFrame is the frame that ends a stream on the carriers whose frames
// are JSON-RPC objects (stdio lines, Redis Streams entries): the request
// id and "final": true (XPORT-4).
func EndFrame(id json.RawMessage) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Final   bool            `json:"final"`
	}{rpc.Version, id, true})
	return b
}

// resultFrame encodes a successful response (the request's id, res as
// result). The result is encoded once, straight into the envelope (with
// a2a's reflection-free encoder for its hot types, issue 17): the same
// bytes as encoding the whole rpc.Response, without encoding (and
// compacting) the result twice.
func resultFrame(id json.RawMessage, res any) []byte {
	if id == nil {
		id = nullID
	}
	if !plainID(id) {
		return encode(rpcResult(id, res))
	}
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	var b []byte
	err := a2a.UseJSON(res, func(r []byte) {
		b = make([]byte, 0, len(head)+len(id)+len(mid)+len(r)+1)
		b = append(b, head...)
		b = append(b, id...)
		b = append(b, mid...)
		b = append(b, r...)
		b = append(b, '}')
	})
	if err != nil {
		return encode(rpcResult(id, res)) // the encoder's own error answer
	}
	return b
}

// plainID reports whether id is a JSON number or string that encoding
// leaves as it is: no whitespace, escapes, control or non-ASCII bytes, and
// none of the characters the encoder escapes for HTML (<, >, &).
func plainID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	if string(id) == "null" {
		return true
	}
	str := id[0] == '"'
	if str && (len(id) < 2 || id[len(id)-1] != '"') {
		return false
	}
	for i, c := range id {
		switch {
		case c == '"' && str && (i == 0 || i == len(id)-1):
		case c == '"', c == '\\', c == '<', c == '>', c == '&', c <= ' ', c >= 0x7f:
			return false
		case !str && !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'):
			return false
		}
	}
	return str || json.Valid(id)
}
