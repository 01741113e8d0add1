package a2a

import "testing"

// Every row of the error table names a canonical gRPC code, so no binding
// falls back to INTERNAL for a known error (A2A 1.0 §5.4, §11.6).
func TestErrorTableGRPCNames(t *testing.T) {
	for code, k := range errorKinds {
		n, ok := grpcCodeNumbers[k.grpc]
		if !ok || n == 0 || k.http < 400 || k.reason == "" {
			t.Errorf("code %d: row %+v (gRPC %d, known %v)", code, k, n, ok)
		}
	}
}

// CodeForReason inverts Reason for every row of the error table, the
// gateway's own limits reasons included (AUTH-6), so a client reading the
// ErrorInfo reason of any binding gets the code back.
func TestCodeForReason(t *testing.T) {
	for code, k := range errorKinds {
		got, ok := CodeForReason(k.reason)
		if !ok || got != code {
			t.Errorf("CodeForReason(%q) = %d, %v; want %d", k.reason, got, ok, code)
		}
	}
	if _, ok := CodeForReason("NO_SUCH_REASON"); ok {
		t.Error("an unknown reason has a code")
	}
}
