// Package jsonrpc is the one JSON-RPC 2.0 envelope of the module: the
// request and response objects, the error object, and the validation of a
// received request (RPC-1, RPC-2), shared by the server binding, the
// client and the validator's probe. What a method means is not its
// concern.
package jsonrpc

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Version is the value of the "jsonrpc" member.
const Version = "2.0"

// The error codes JSON-RPC 2.0 defines.
const (
	// CodeParseError is an unreadable or invalid JSON body.
	CodeParseError = -32700
	// CodeInvalidRequest is a body that is not a valid request object.
	CodeInvalidRequest = -32600
	// CodeMethodNotFound is an unknown method.
	CodeMethodNotFound = -32601
	// CodeInvalidParams is a method's params that do not fit it.
	CodeInvalidParams = -32602
	// CodeInternalError is a failure of the server.
	CodeInternalError = -32603
)

// Request is a request object as a client sends it.
type Request struct {
	// JSONRPC is Version.
	JSONRPC string `json:"jsonrpc"`
	// ID identifies the call; nil makes it a notification (no answer).
	ID json.RawMessage `json:"id,omitempty"`
	// Method names the operation.
	Method string `json:"method"`
	// Params are the operation's parameters (omitted when nil).
	Params any `json:"params,omitempty"`
}

// NewRequest returns a request with a numeric id.
func NewRequest(id int64, method string, params any) Request {
	return Request{JSONRPC: Version, ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: params}
}

// Error is the error member of a response.
type Error struct {
	// Code is one of the Code constants or an application code.
	Code int `json:"code"`
	// Message is a short description.
	Message string `json:"message"`
	// Data is additional information (omitted when empty).
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Response is a response object: Result on success, Error on failure.
type Response struct {
	// JSONRPC is Version.
	JSONRPC string `json:"jsonrpc"`
	// ID is the id of the request answered (null when it could not be read).
	ID json.RawMessage `json:"id"`
	// Result is the method's result; omitted on error.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the failure; omitted on success.
	Error *Error `json:"error,omitempty"`
}

// NullID is the id of a response to a request whose id could not be read.
func NullID() json.RawMessage { return json.RawMessage("null") }

// Call is one request of a single or batch call as the server read it.
type Call struct {
	// ID is the request's id, nil for a notification; for an invalid
	// request the id to answer with (null when it could not be read).
	ID json.RawMessage
	// Method is the method name.
	Method string
	// Params is the raw params member (nil when absent).
	Params json.RawMessage
	// Notification is true for a valid request without an id.
	Notification bool
}

// envelope is a request as received; every member is kept raw so that a
// wrong type becomes Invalid Request instead of a decode error.
type envelope struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// ParseCall validates the envelope of one request object (RPC-2). On
// failure the error has CodeInvalidRequest and the Call holds the id to
// answer with; an invalid request is never a notification.
func ParseCall(raw json.RawMessage) (Call, *Error) {
	invalid := func(msg string) *Error { return &Error{Code: CodeInvalidRequest, Message: "Invalid Request: " + msg} }
	var env envelope
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(trimmed, &env) != nil {
		return Call{ID: NullID()}, invalid("the request must be a JSON object")
	}
	call := Call{ID: env.ID, Params: env.Params}
	if env.ID == nil {
		call.Notification = true
	} else if !ValidID(env.ID) {
		call.ID = NullID()
		return call, invalid("id must be a string, a number or null")
	}
	fail := func(msg string) (Call, *Error) {
		call.Notification = false
		if call.ID == nil {
			call.ID = NullID()
		}
		return call, invalid(msg)
	}
	if string(bytes.TrimSpace(env.JSONRPC)) != `"`+Version+`"` {
		return fail(`jsonrpc must be "2.0"`)
	}
	if m, ok := plainString(env.Method); ok {
		call.Method = m
	} else if err := json.Unmarshal(env.Method, &call.Method); err != nil {
		return fail("method must be a non-empty string")
	}
	if call.Method == "" {
		return fail("method must be a non-empty string")
	}
	return call, nil
}

// plainString returns the text of raw when it is a JSON string of
// printable ASCII without escapes (every method name): what json.Unmarshal
// would decode, without its decoder (issue 29). ok is false otherwise.
func plainString(raw json.RawMessage) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	body := raw[1 : len(raw)-1]
	for _, c := range body {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return "", false
		}
	}
	return string(body), true
}

// ValidID reports whether id is a JSON string, number or null, the id
// types JSON-RPC 2.0 allows.
func ValidID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch id[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		// One valid JSON value starting so is a string or a number
		// (json.Valid checks without decoding, and allocates nothing).
		return json.Valid(id)
	case 'n':
		return string(id) == "null"
	}
	return false
}
