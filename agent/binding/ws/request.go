package ws

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/wsframe"
)

// Carrier-level refusals, answered in an error frame (XPORT-3).
var (
	errNotText     = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: frames must be text messages")
	errNotObject   = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a frame must be a JSON object {\"id\", \"payload\", \"headers\"?}")
	errBadFrame    = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the frame does not have the form {\"id\": string|number, \"payload\": object, \"headers\"?: {string: string}}")
	errNoPayload   = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: the frame's payload must be one JSON-RPC request object")
	errDuplicateID = a2a.NewError(a2a.CodeInvalidRequest, "Invalid Request: a request with this frame id is already in flight on this connection")
	errParse       = a2a.NewError(a2a.CodeParseError, "Parse error: the frame is not valid JSON")
)

// errTooMany is the refusal of a request beyond max_in_flight.
func errTooMany(limit int) error {
	return &a2a.Error{
		Code:     a2a.CodeInvalidRequest,
		Message:  "Invalid Request: too many requests in flight on this WebSocket connection (at most " + strconv.Itoa(limit) + "); wait for an answer or open another connection",
		Metadata: map[string]string{"maxInFlight": strconv.Itoa(limit)},
	}
}

// handle reads one text message: a request frame, run in its own
// goroutine, or a cancel frame; anything else is answered with an error
// frame (bad JSON -32700, not a request object -32600).
func (c *conn) handle(ctx context.Context, data []byte) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		c.refuse(nil, errParse)
		return
	}
	if len(data) == 0 || data[0] != '{' {
		c.refuse(nil, errNotObject)
		return
	}
	var f wsframe.Request
	if err := json.Unmarshal(data, &f); err != nil || !wsframe.ValidID(f.ID) {
		c.refuse(idOf(data), errBadFrame)
		return
	}
	key := idKey(f.ID)
	if f.Cancel {
		if key != "" {
			c.cancelRequest(key)
		}
		return
	}
	if p := bytes.TrimSpace(f.Payload); len(p) == 0 || p[0] != '{' {
		c.refuseFrame(f.ID, nil, "", errNoPayload)
		return
	}
	if c.expired() { // AUTH-10: the credential's access has ended
		pid, method := payloadID(f.Payload)
		c.refuseFrame(f.ID, pid, method, errExpired)
		return
	}
	rctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(errCanceled) }
	if err := c.acquire(key, cancel); err != nil {
		cancel()
		pid, method := payloadID(f.Payload)
		c.refuseFrame(f.ID, pid, method, err)
		return
	}
	call := c.callFor(f.Headers)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer cancel()
		// The slot is free before the final frame is written, so a client
		// may send its next request as soon as it reads it.
		release := sync.OnceFunc(func() { c.release(key) })
		defer release()
		c.serve(rctx, f.ID, call, f.Payload, release)
	}()
}

// serve runs one request and writes its frames; release frees its
// in-flight slot just before the final frame.
func (c *conn) serve(ctx context.Context, id json.RawMessage, call agent.Call, payload []byte, release func()) {
	out := c.h.d.Handle(ctx, call, payload)
	if out.Stream != nil {
		c.pump(ctx, id, out, release)
		return
	}
	release()
	switch {
	case out.Response == nil: // a notification, never answered
	case errors.Is(context.Cause(ctx), errCanceled) && isError(out.Response):
		// Canceled by the client before it had an answer: the error is
		// the cancel's, not the method's.
		c.send(wsframe.Encode(id, nil, true))
	default:
		c.send(wsframe.Encode(id, out.Response, true))
	}
}

// errCanceled is the cause of a request canceled by a cancel frame.
var errCanceled = errors.New("canceled by the client")

// isError reports whether an encoded JSON-RPC response is an error.
func isError(resp []byte) bool {
	var r struct {
		Error json.RawMessage `json:"error"`
	}
	return json.Unmarshal(resp, &r) == nil && len(r.Error) > 0
}

// callFor is the connection's call with a frame's A2A-Version and
// A2A-Extensions headers, when present, in place of the upgrade
// request's.
func (c *conn) callFor(h map[string]string) agent.Call {
	call := c.base
	if v, ok := wsframe.Header(h, wsframe.HeaderVersion); ok {
		call.Version = strings.TrimSpace(v)
	}
	if v, ok := wsframe.Header(h, wsframe.HeaderExtensions); ok {
		call.Extensions = a2a.ParseExtensions(v)
	}
	return call
}

// refuse answers an unreadable frame: frame id id (nil: null), payload
// id null.
func (c *conn) refuse(id json.RawMessage, err error) {
	c.refuseFrame(id, nil, "", err)
}

// refuseFrame answers a frame refused before it reached a method, counted
// like the dispatcher's own refusals.
func (c *conn) refuseFrame(id, payloadID json.RawMessage, method string, err error) {
	out := c.h.d.Refuse(c.ctx, c.base, payloadID, method, err)
	c.send(wsframe.Encode(id, out.Response, true))
}

// idKey is the in-flight key of a frame id ("" for an absent or null id).
func idKey(id json.RawMessage) string {
	id = bytes.TrimSpace(id)
	if len(id) == 0 || string(id) == "null" {
		return ""
	}
	return string(id)
}

// idOf reads the frame id of an otherwise malformed frame, when it is one.
func idOf(data []byte) json.RawMessage {
	var f struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(data, &f) != nil || !wsframe.ValidID(f.ID) {
		return nil
	}
	return f.ID
}

// payloadID reads the JSON-RPC id and method of a payload, for a refusal.
func payloadID(payload []byte) (json.RawMessage, string) {
	var p struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(payload, &p) != nil || !wsframe.ValidID(p.ID) {
		return nil, ""
	}
	return p.ID, p.Method
}
