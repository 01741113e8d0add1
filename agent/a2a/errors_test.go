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
