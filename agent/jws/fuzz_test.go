package jws

import "testing"

// FuzzVerifyCard checks that canonicalization and verification of
// arbitrary input never panic.
func FuzzVerifyCard(f *testing.F) {
	f.Add([]byte(`{"name":"a","signatures":[{"protected":"eyJhbGciOiJFUzI1NiIsImtpZCI6ImsifQ","signature":"AA"}]}`))
	f.Add([]byte(`{"securitySchemes":{"x":{"oauth2SecurityScheme":{"flows":{"authorizationCode":{"pkceRequired":false,"scopes":{}}}}}},"signatures":[{"protected":"e30","signature":""}]}`))
	ks := &KeySet{}
	_ = ks.AddSecret("k", []byte("0123456789abcdef0123456789abcdef"))
	v := &Verifier{Keys: ks}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = CanonicalCard(data)
		_, _ = SDKCanonicalCard(data)
		_, _ = v.VerifyCard(t.Context(), data)
		_, _ = ParseJWKS(data)
	})
}
