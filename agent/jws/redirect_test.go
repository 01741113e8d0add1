package jws

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestFetchJWKSDoesNotFollowRedirects: a JWKS is taken only from the origin
// that was asked (the jku allow-list, CARD-7); a redirect elsewhere fails.
func TestFetchJWKSDoesNotFollowRedirects(t *testing.T) {
	var hits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"keys":[]}`))
	}))
	defer other.Close()
	allowed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/jwks.json", http.StatusFound)
	}))
	defer allowed.Close()
	if _, err := FetchJWKS(context.Background(), allowed.URL+"/jwks.json", FetchOptions{}); err == nil {
		t.Fatal("a redirecting JWKS URL was accepted")
	}
	if hits.Load() != 0 {
		t.Fatalf("the redirect target was fetched %d times", hits.Load())
	}
}
