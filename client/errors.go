package client

import (
	"errors"
	"fmt"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Kind classifies an Error.
type Kind int

// The kinds of Error.
const (
	// KindTransport is a network or HTTP-level failure.
	KindTransport Kind = iota
	// KindAuth is a 401/403 answer.
	KindAuth
	// KindProtocol is an A2A error answer or a malformed response.
	KindProtocol
	// KindUsage is a bad flag, argument or local file.
	KindUsage
	// KindTask is a task that ended failed, canceled or rejected.
	KindTask
	// KindInterrupted is a call stopped by Ctrl-C.
	KindInterrupted
)

// Error is what the client returns for every failure. Its message is one
// line and never holds credentials.
type Error struct {
	// Kind classifies the failure (the CLI maps it to its exit code).
	Kind Kind
	// Msg is the message shown to the user.
	Msg string
	// A2A is the protocol error the server answered, if any.
	A2A *a2a.Error
	// Err is the underlying cause, if any.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil && e.Msg == "" {
		return e.Err.Error()
	}
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// usagef returns an error of KindUsage: bad local input (a file, a key,
// a binding name).
func usagef(format string, args ...any) error {
	return &Error{Kind: KindUsage, Msg: fmt.Sprintf(format, args...)}
}

func transportErr(msg string, err error) error {
	return &Error{Kind: KindTransport, Msg: msg, Err: err}
}

func protocolf(format string, args ...any) error {
	return &Error{Kind: KindProtocol, Msg: fmt.Sprintf(format, args...)}
}

// rpcErr wraps an A2A error answer.
func rpcErr(method string, e *a2a.Error) error {
	name := e.Reason()
	if name == "INTERNAL_ERROR" && e.Code != a2a.CodeInternalError {
		name = fmt.Sprintf("error %d", e.Code)
	}
	msg := e.Message
	if id := e.Metadata["taskId"]; id != "" && e.Code == a2a.CodeTaskNotFound {
		msg += " (task " + id + ")"
	}
	return &Error{Kind: KindProtocol, Msg: fmt.Sprintf("%s failed: %s: %s", method, name, msg), A2A: e}
}

// A2AError returns the protocol error inside err, if any.
func A2AError(err error) *a2a.Error {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.A2A
	}
	return nil
}
