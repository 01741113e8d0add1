package grpc

import (
	"net/http"
	"strconv"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// Status renders err as the gRPC status of the A2A error it carries (any
// other error is the sanitised internal error): the code of the error
// table (a2a.Error.GRPCCode, A2A 1.0 §5.4) and a google.rpc.ErrorInfo
// (reason, domain a2a-protocol.org, metadata) in its details, plus a
// google.rpc.BadRequest naming the bad fields of an invalid-params error
// (XPORT-2) and a google.rpc.RetryInfo when the caller should wait before
// retrying (a rate or turn limit, AUTH-6: RESOURCE_EXHAUSTED).
func Status(err error) *status.Status {
	e := a2a.AsError(err)
	st := status.New(codes.Code(e.GRPCCode()), e.Message)
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: e.Reason(), Domain: a2a.ErrorDomain, Metadata: e.Metadata}}
	if len(e.Violations) > 0 {
		br := &errdetails.BadRequest{}
		for _, v := range e.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: v.Field, Description: v.Description})
		}
		details = append(details, br)
	}
	if n := e.RetryAfterSeconds(); n > 0 {
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(time.Duration(n) * time.Second)})
	}
	if withDetails, err := st.WithDetails(details...); err == nil {
		return withDetails
	}
	return st
}

// IsGRPC reports whether r is a gRPC request: HTTP/2 with a Content-Type
// of application/grpc, application/grpc+<codec> or application/grpc;….
// gRPC-Web (application/grpc-web) is not gRPC.
func IsGRPC(r *http.Request) bool {
	if r.ProtoMajor != 2 {
		return false
	}
	ct := r.Header.Get("Content-Type")
	const base = "application/grpc"
	if len(ct) < len(base) || ct[:len(base)] != base {
		return false
	}
	return len(ct) == len(base) || ct[len(base)] == '+' || ct[len(base)] == ';'
}

// WriteStatus answers a gRPC request outside the gRPC server (a2a_auth's
// refusal) with a trailers-only response: HTTP 200, Content-Type
// application/grpc, grpc-status and grpc-message, no body. Headers already
// set on w (WWW-Authenticate) are kept.
func WriteStatus(w http.ResponseWriter, code codes.Code, msg string) {
	h := w.Header()
	h.Set("Content-Type", "application/grpc")
	h.Set("Grpc-Status", strconv.Itoa(int(code)))
	h.Set("Grpc-Message", encodeGRPCMessage(msg))
	w.WriteHeader(http.StatusOK)
}

// encodeGRPCMessage percent-encodes msg as the grpc-message header wants
// (bytes outside printable ASCII and '%').
func encodeGRPCMessage(msg string) string {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, len(msg))
	for i := 0; i < len(msg); i++ {
		c := msg[i]
		if c >= ' ' && c <= '~' && c != '%' {
			out = append(out, c)
			continue
		}
		out = append(out, '%', hex[c>>4], hex[c&15])
	}
	return string(out)
}
