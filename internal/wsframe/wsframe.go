// Package wsframe is the frame format of the WebSocket JSON-RPC binding
// (XPORT-3), shared by the server binding and the client: every text
// message is one JSON object. A client sends
//
//	{"id": <string|number>, "payload": <JSON-RPC request>, "headers": {"A2A-Version": "1.0", "A2A-Extensions": "uri, uri"}}
//
// ("headers" optional), or {"id": X, "cancel": true} to stop its request X;
// the server answers
//
//	{"id": X, "payload": <JSON-RPC response>, "final": bool}
//
// one frame for a unary method (final true), one frame per event of a
// streaming method (final false), then {"id": X, "final": true} with no
// payload when the stream has ended.
package wsframe

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Header names a request frame's headers may carry (matched without
// regard to case).
const (
	HeaderVersion    = "A2A-Version"
	HeaderExtensions = "A2A-Extensions"
)

// Request is a frame from the client.
type Request struct {
	// ID correlates the server's frames with this request: a string or a
	// number, unique among the connection's requests in flight. Absent:
	// null (the request cannot be canceled by frame).
	ID json.RawMessage `json:"id,omitempty"`
	// Payload is one JSON-RPC 2.0 request object.
	Payload json.RawMessage `json:"payload,omitempty"`
	// Headers override the upgrade request's A2A-Version and
	// A2A-Extensions for this request.
	Headers map[string]string `json:"headers,omitempty"`
	// Cancel stops the request in flight with the same ID: its stream is
	// closed (as when an SSE client disconnects) and it ends with a final
	// frame.
	Cancel bool `json:"cancel,omitempty"`
}

// Response is a frame from the server.
type Response struct {
	// ID is the ID of the request frame answered.
	ID json.RawMessage `json:"id"`
	// Payload is a JSON-RPC 2.0 response object (absent on the frame that
	// ends a stream).
	Payload json.RawMessage `json:"payload,omitempty"`
	// Final marks the request's last frame.
	Final bool `json:"final"`
}

var nullID = json.RawMessage("null")

// Encode renders a server frame without re-encoding payload, which must be
// valid JSON (or nil for none); id must be valid JSON or nil (null).
func Encode(id, payload json.RawMessage, final bool) []byte {
	if len(id) == 0 {
		id = nullID
	}
	var b bytes.Buffer
	b.Grow(len(id) + len(payload) + 40)
	b.WriteString(`{"id":`)
	b.Write(id)
	if payload != nil {
		b.WriteString(`,"payload":`)
		b.Write(payload)
	}
	if final {
		b.WriteString(`,"final":true}`)
	} else {
		b.WriteString(`,"final":false}`)
	}
	return b.Bytes()
}

// Header returns the value of the header name in h, matched without
// regard to case, and whether it is present.
func Header(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// ValidID reports whether id is a frame id: absent, null, a string or a
// number.
func ValidID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return true
	}
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}
