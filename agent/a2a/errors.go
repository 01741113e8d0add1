package a2a

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// ErrorDomain is the ErrorInfo domain of A2A errors.
const ErrorDomain = "a2a-protocol.org"

// JSON-RPC and A2A error codes: the standard JSON-RPC 2.0 ones (defined
// in internal/jsonrpc) and those A2A adds.
const (
	CodeParseError                   = jsonrpc.CodeParseError
	CodeInvalidRequest               = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound               = jsonrpc.CodeMethodNotFound
	CodeInvalidParams                = jsonrpc.CodeInvalidParams
	CodeInternalError                = jsonrpc.CodeInternalError
	CodeTaskNotFound                 = -32001
	CodeTaskNotCancelable            = -32002
	CodePushNotificationNotSupported = -32003
	CodeUnsupportedOperation         = -32004
	CodeContentTypeNotSupported      = -32005
	CodeInvalidAgentResponse         = -32006
	CodeExtendedCardNotConfigured    = -32007
	CodeExtensionSupportRequired     = -32008
	CodeVersionNotSupported          = -32009
	// CodePermissionDenied and CodeResourceExhausted are the gateway's
	// own (AUTH-6, not A2A 1.0 codes): a method the caller's limits do not
	// allow, and a caller over its rate or turn limit. Clients should read
	// the ErrorInfo reason (PERMISSION_DENIED, RESOURCE_EXHAUSTED).
	CodePermissionDenied  = -32050
	CodeResourceExhausted = -32051
)

// FieldViolation names a bad request field, for google.rpc.BadRequest.
type FieldViolation struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}

// Error is an A2A protocol error. It renders as a JSON-RPC error object, a
// google.rpc.Status for HTTP+JSON, and carries an ErrorInfo reason.
type Error struct {
	// Code is the JSON-RPC error code.
	Code int
	// Message is the client-facing message; it never holds secrets or paths.
	Message string
	// Metadata goes into ErrorInfo.metadata (e.g. the task id).
	Metadata map[string]string
	// Violations name bad fields (invalid params only).
	Violations []FieldViolation
	// RetryAfter, when positive, is how long the caller should wait before
	// retrying (a google.rpc.RetryInfo detail; HTTP Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// errorKind is one row of the error table: how an error code is carried
// by each binding.
type errorKind struct {
	reason string // google.rpc.ErrorInfo reason
	http   int    // HTTP+JSON status
	grpc   string // gRPC status code name, also the AIP-193 `status` of HTTP+JSON error bodies
}

// errorKinds is the one error table of the gateway (A2A 1.0 §5.4, the
// columns of 1.0.1, which a2a-go v2 follows): for every JSON-RPC code, the
// ErrorInfo reason, the HTTP+JSON status and the gRPC status, whose name is
// also the `status` member of an HTTP+JSON error body (§11.6, AIP-193).
// Every binding reads it: JSON-RPC sends the code, HTTP+JSON the HTTP
// status and the gRPC name, gRPC the gRPC code (GRPCCode).
//
// 1.0.0 had 409 for TaskNotCancelable, 415 for ContentTypeNotSupported,
// 502 for InvalidAgentResponse and UNIMPLEMENTED for PushNotificationNot-
// Supported, UnsupportedOperation and VersionNotSupported; 1.0.1 changed
// them to the values below (A2A PR #1627), except ContentTypeNotSupported,
// which stays 415 Unsupported Media Type on HTTP+JSON (RPC-15: what HTTP
// itself says of a body type the server refuses, for part media types and
// a request Content-Type alike). Clients key on the JSON-RPC code or the
// reason.
var errorKinds = map[int]errorKind{
	CodeParseError:                   {"PARSE_ERROR", http.StatusBadRequest, "INVALID_ARGUMENT"},
	CodeInvalidRequest:               {"INVALID_REQUEST", http.StatusBadRequest, "INVALID_ARGUMENT"},
	CodeMethodNotFound:               {"METHOD_NOT_FOUND", http.StatusNotFound, "UNIMPLEMENTED"},
	CodeInvalidParams:                {"INVALID_PARAMS", http.StatusBadRequest, "INVALID_ARGUMENT"},
	CodeInternalError:                {"INTERNAL_ERROR", http.StatusInternalServerError, "INTERNAL"},
	CodeTaskNotFound:                 {"TASK_NOT_FOUND", http.StatusNotFound, "NOT_FOUND"},
	CodeTaskNotCancelable:            {"TASK_NOT_CANCELABLE", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodePushNotificationNotSupported: {"PUSH_NOTIFICATION_NOT_SUPPORTED", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodeUnsupportedOperation:         {"UNSUPPORTED_OPERATION", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodeContentTypeNotSupported:      {"CONTENT_TYPE_NOT_SUPPORTED", http.StatusUnsupportedMediaType, "INVALID_ARGUMENT"},
	CodeInvalidAgentResponse:         {"INVALID_AGENT_RESPONSE", http.StatusInternalServerError, "INTERNAL"},
	CodeExtendedCardNotConfigured:    {"EXTENDED_AGENT_CARD_NOT_CONFIGURED", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodeExtensionSupportRequired:     {"EXTENSION_SUPPORT_REQUIRED", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodeVersionNotSupported:          {"VERSION_NOT_SUPPORTED", http.StatusBadRequest, "FAILED_PRECONDITION"},
	CodePermissionDenied:             {"PERMISSION_DENIED", http.StatusForbidden, "PERMISSION_DENIED"},
	CodeResourceExhausted:            {"RESOURCE_EXHAUSTED", http.StatusTooManyRequests, "RESOURCE_EXHAUSTED"},
}

// grpcCodeNumbers are the canonical gRPC status codes (google.rpc.Code)
// by name.
var grpcCodeNumbers = map[string]uint32{
	"OK": 0, "CANCELLED": 1, "UNKNOWN": 2, "INVALID_ARGUMENT": 3, "DEADLINE_EXCEEDED": 4,
	"NOT_FOUND": 5, "ALREADY_EXISTS": 6, "PERMISSION_DENIED": 7, "RESOURCE_EXHAUSTED": 8,
	"FAILED_PRECONDITION": 9, "ABORTED": 10, "OUT_OF_RANGE": 11, "UNIMPLEMENTED": 12,
	"INTERNAL": 13, "UNAVAILABLE": 14, "DATA_LOSS": 15, "UNAUTHENTICATED": 16,
}

func (e *Error) kind() errorKind {
	if k, ok := errorKinds[e.Code]; ok {
		return k
	}
	return errorKinds[CodeInternalError]
}

// Reason is the ErrorInfo reason, e.g. TASK_NOT_FOUND.
func (e *Error) Reason() string { return e.kind().reason }

// CodeForReason is the JSON-RPC code of an ErrorInfo reason in the error
// table (the inverse of Reason); false for a reason not in it.
func CodeForReason(reason string) (int, bool) {
	for code, k := range errorKinds {
		if k.reason == reason {
			return code, true
		}
	}
	return 0, false
}

// HTTPStatus is the status code of the error in the HTTP+JSON binding.
func (e *Error) HTTPStatus() int { return e.kind().http }

// GRPCStatus is the canonical gRPC code name of the error, also the
// `status` member of its HTTP+JSON body (AIP-193).
func (e *Error) GRPCStatus() string { return e.kind().grpc }

// GRPCCode is the numeric gRPC status code of the error (google.rpc.Code).
func (e *Error) GRPCCode() uint32 { return grpcCodeNumbers[e.kind().grpc] }

// Details returns the google.protobuf.Any list carried in error data: an
// ErrorInfo, plus a BadRequest when fields are named.
func (e *Error) Details() []map[string]any {
	info := map[string]any{
		"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
		"reason": e.Reason(),
		"domain": ErrorDomain,
	}
	if len(e.Metadata) > 0 {
		info["metadata"] = e.Metadata
	}
	out := []map[string]any{info}
	if len(e.Violations) > 0 {
		out = append(out, map[string]any{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": e.Violations,
		})
	}
	if e.RetryAfter > 0 {
		out = append(out, map[string]any{
			"@type":      "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": strconv.Itoa(e.RetryAfterSeconds()) + "s",
		})
	}
	return out
}

// RetryAfterSeconds is RetryAfter rounded up to whole seconds (at least 1),
// the value of an HTTP Retry-After header; 0 when RetryAfter is not set.
func (e *Error) RetryAfterSeconds() int {
	if e.RetryAfter <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// NewError builds an error with a formatted message.
func NewError(code int, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrTaskNotFound is the error for an unknown or foreign task.
func ErrTaskNotFound(id string) *Error {
	return &Error{Code: CodeTaskNotFound, Message: "Task not found", Metadata: map[string]string{"taskId": id}}
}

// ErrInvalidParams names a bad field.
func ErrInvalidParams(field, description string) *Error {
	return &Error{
		Code:       CodeInvalidParams,
		Message:    "Invalid params: " + field + ": " + description,
		Violations: []FieldViolation{{Field: field, Description: description}},
	}
}

// ErrUnsupportedOperation is the error for an operation the task or server cannot do.
func ErrUnsupportedOperation(msg string) *Error {
	return &Error{Code: CodeUnsupportedOperation, Message: msg}
}

// ErrInternal is a sanitised internal error.
func ErrInternal() *Error {
	return &Error{Code: CodeInternalError, Message: "Internal error"}
}

// AsError converts any error into a client-safe A2A error: an *Error in
// its chain, else the sanitised internal error.
func AsError(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return ErrInternal()
}
