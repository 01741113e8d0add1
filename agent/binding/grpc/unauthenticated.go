package grpc

import (
	"encoding/base64"
	"net/http"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// WriteUnauthenticated answers a gRPC request refused before the gRPC
// server (a2a_auth) with the status UNAUTHENTICATED (16) and a
// google.rpc.ErrorInfo detail (reason UNAUTHENTICATED, domain
// a2a-protocol.org) in grpc-status-details-bin, as a trailers-only
// response (see WriteStatus).
func WriteUnauthenticated(w http.ResponseWriter, e *a2a.Error) {
	st := status.New(codes.Unauthenticated, e.Message)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: e.Reason(), Domain: a2a.ErrorDomain, Metadata: e.Metadata}); err == nil {
		st = d
	}
	if b, err := proto.Marshal(st.Proto()); err == nil {
		w.Header().Set("Grpc-Status-Details-Bin", base64.RawStdEncoding.EncodeToString(b))
	}
	WriteStatus(w, codes.Unauthenticated, e.Message)
}
