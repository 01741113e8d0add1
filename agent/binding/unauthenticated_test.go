package binding

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
)

// TestWriteUnauthenticated (issue 25, AUTH-1): the answer per carrier
// family, each with the ErrorInfo reason UNAUTHENTICATED; gRPC-shaped
// answers only where gRPC is on.
func TestWriteUnauthenticated(t *testing.T) {
	const info = `{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","reason":"UNAUTHENTICATED"}`
	grpcReq := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/lf.a2a.v1.A2AService/GetTask", nil)
		r.ProtoMajor, r.Header = 2, http.Header{"Content-Type": {"application/grpc"}}
		return r
	}
	for _, tc := range []struct {
		name   string
		r      *http.Request
		grpcOn bool
		status int
		body   string
	}{
		{"jsonrpc", httptest.NewRequest(http.MethodPost, "/", nil), false, 401,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"Unauthorized","data":[` + info + `]}}`},
		{"rest", httptest.NewRequest(http.MethodGet, "/tasks", nil), false, 401,
			`{"error":{"code":401,"details":[` + info + `],"message":"Unauthorized","status":"UNAUTHENTICATED"}}`},
		{"rest post", httptest.NewRequest(http.MethodPost, "/message:send", nil), true, 401,
			`{"error":{"code":401,"details":[` + info + `],"message":"Unauthorized","status":"UNAUTHENTICATED"}}`},
		{"grpc off", grpcReq(), false, 401,
			`{"error":{"code":401,"details":[` + info + `],"message":"Unauthorized","status":"UNAUTHENTICATED"}}`},
		{"grpc on", grpcReq(), true, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			WriteUnauthenticated(w, tc.r, []string{`Bearer realm="a2a"`}, tc.grpcOn)
			if w.Code != tc.status || w.Body.String() != tc.body || w.Header().Get("WWW-Authenticate") != `Bearer realm="a2a"` {
				t.Fatalf("HTTP %d %s %v, want %d %s", w.Code, w.Body, w.Header(), tc.status, tc.body)
			}
			if tc.status != 200 {
				return
			}
			if w.Header().Get("Grpc-Status") != "16" || w.Header().Get("Content-Type") != "application/grpc" {
				t.Fatalf("gRPC answer headers %v", w.Header())
			}
			raw, err := base64.RawStdEncoding.DecodeString(w.Header().Get("Grpc-Status-Details-Bin"))
			var st spb.Status
			if err != nil || proto.Unmarshal(raw, &st) != nil || st.Code != 16 || len(st.Details) != 1 {
				t.Fatalf("grpc-status-details-bin: %v %v", err, &st)
			}
			var ei errdetails.ErrorInfo
			if err := st.Details[0].UnmarshalTo(&ei); err != nil || ei.Reason != "UNAUTHENTICATED" || ei.Domain != "a2a-protocol.org" {
				t.Fatalf("ErrorInfo %v %v", &ei, err)
			}
		})
	}
}
