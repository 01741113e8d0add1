package a2a

import "net/http"

// CodeUnauthenticated is the JSON-RPC code of a request refused for
// missing or invalid credentials on a carrier that cannot answer with HTTP
// 401 (Redis Streams, XPORT-5). A2A 1.0 leaves the code unspecified; this
// is the one the official a2a-go SDK uses.
const CodeUnauthenticated = -31401

// ErrUnauthenticated is the error of a request without valid credentials.
func ErrUnauthenticated() *Error {
	return &Error{Code: CodeUnauthenticated, Message: "Unauthorized"}
}

func init() {
	errorKinds[CodeUnauthenticated] = errorKind{"UNAUTHENTICATED", http.StatusUnauthorized, "UNAUTHENTICATED"}
}
