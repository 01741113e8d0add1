package grpc

import (
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// AUTH-6, XPORT-2 (issue 26 item 4): a limits refusal is PERMISSION_DENIED
// or RESOURCE_EXHAUSTED, the latter with a google.rpc.RetryInfo, never
// INTERNAL; the A2A errors take the gRPC column of A2A 1.0.1 §5.4.
func TestStatusCodes(t *testing.T) {
	cases := []struct {
		err    *a2a.Error
		code   codes.Code
		reason string
		retry  time.Duration
	}{
		{&a2a.Error{Code: a2a.CodePermissionDenied, Message: "no"}, codes.PermissionDenied, "PERMISSION_DENIED", 0},
		{&a2a.Error{Code: a2a.CodeResourceExhausted, Message: "slow down", RetryAfter: 1500 * time.Millisecond}, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", 2 * time.Second},
		{a2a.ErrUnauthenticated(), codes.Unauthenticated, "UNAUTHENTICATED", 0},
		{a2a.NewError(a2a.CodeUnsupportedOperation, "x"), codes.FailedPrecondition, "UNSUPPORTED_OPERATION", 0},
		{a2a.NewError(a2a.CodeContentTypeNotSupported, "x"), codes.InvalidArgument, "CONTENT_TYPE_NOT_SUPPORTED", 0},
		{a2a.NewError(a2a.CodeInvalidAgentResponse, "x"), codes.Internal, "INVALID_AGENT_RESPONSE", 0},
		{a2a.NewError(-32099, "unknown code"), codes.Internal, "INTERNAL_ERROR", 0},
	}
	for _, c := range cases {
		st := Status(c.err)
		var reason string
		var retry time.Duration
		for _, d := range st.Details() {
			switch d := d.(type) {
			case *errdetails.ErrorInfo:
				reason = d.GetReason()
			case *errdetails.RetryInfo:
				retry = d.GetRetryDelay().AsDuration()
			}
		}
		if st.Code() != c.code || reason != c.reason || retry != c.retry {
			t.Errorf("Status(%d) = %v %q retry %v, want %v %q retry %v", c.err.Code, st.Code(), reason, retry, c.code, c.reason, c.retry)
		}
	}
}
