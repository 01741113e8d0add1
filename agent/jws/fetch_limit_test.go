package jws

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchJWKSTooLarge (AUTH-3): a JWKS body beyond MaxBytes is refused
// with the limit, a body at the limit is parsed.
func TestFetchJWKSTooLarge(t *testing.T) {
	body := `{"keys":[]}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	if _, err := FetchJWKS(t.Context(), srv.URL, FetchOptions{MaxBytes: int64(len(body))}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := FetchJWKS(t.Context(), srv.URL, FetchOptions{MaxBytes: int64(len(body) - 1)})
	if err == nil || !strings.Contains(err.Error(), "larger than 10 bytes") {
		t.Fatalf("beyond the limit: %v", err)
	}
}
