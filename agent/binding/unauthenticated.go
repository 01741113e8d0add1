package binding

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/binding/grpc"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// WriteUnauthenticated answers a request without valid credentials in the
// error format of the binding it was meant for, each carrying the
// ErrorInfo reason UNAUTHENTICATED (domain a2a-protocol.org), after the
// WWW-Authenticate challenges:
//
//   - a gRPC request (IsGRPC) when grpcOn (the handler serves gRPC): the
//     gRPC status UNAUTHENTICATED with the ErrorInfo detail;
//   - a JSON-RPC request (POST to the agent root): HTTP 401 with a
//     JSON-RPC error response, code a2a.CodeUnauthenticated, id null (the
//     body of an unauthenticated request is not read);
//   - anything else (HTTP+JSON, a WebSocket upgrade, a gRPC request where
//     gRPC is off): HTTP 401 with the AIP-193 body of the HTTP+JSON
//     binding, {"error":{"code":401,"status":"UNAUTHENTICATED",…}}.
func WriteUnauthenticated(w http.ResponseWriter, r *http.Request, challenges []string, grpcOn bool) {
	e := a2a.ErrUnauthenticated()
	hdr := w.Header()
	for _, c := range challenges {
		hdr.Add("WWW-Authenticate", c)
	}
	if grpcOn && grpc.IsGRPC(r) {
		grpc.WriteUnauthenticated(w, e) // XPORT-2: a gRPC client reads only a status
		return
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(UnauthenticatedBody(IsJSONRPC(r)))
}

// IsJSONRPC reports whether r is for the JSON-RPC binding: POST to the
// agent root (see Handler.Serve).
func IsJSONRPC(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/" || r.URL.Path == "") && !strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// UnauthenticatedBody is the 401 body: a JSON-RPC error response with a
// null id (jsonRPC) or the AIP-193 error of the HTTP+JSON binding.
func UnauthenticatedBody(jsonRPC bool) []byte {
	e := a2a.ErrUnauthenticated()
	details := e.Details()
	var b []byte
	if jsonRPC {
		data, _ := json.Marshal(details)
		b, _ = json.Marshal(rpc.Response{JSONRPC: rpc.Version, ID: rpc.NullID(), Error: &rpc.Error{Code: e.Code, Message: e.Message, Data: data}})
		return b
	}
	b, _ = json.Marshal(map[string]any{"error": map[string]any{
		"code": e.HTTPStatus(), "status": e.GRPCStatus(), "message": e.Message, "details": details,
	}})
	return b
}
