package client

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFetchCardErrors checks how the client reads the shared card fetcher's
// failures (CLI-1, CLI-2): an over-size card is a transport error, a 401
// an auth error naming the challenge, a redirect is not followed, and no
// message carries the target's credentials or query.
func TestFetchCardErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/big/"):
			w.Write([]byte(`{"name":"` + strings.Repeat("x", MaxCardSize) + `"}`))
		case strings.HasPrefix(r.URL.Path, "/auth/"):
			w.Header().Set("WWW-Authenticate", `Bearer realm="a2a"`)
			w.WriteHeader(http.StatusUnauthorized)
		case strings.HasPrefix(r.URL.Path, "/moved/"):
			http.Redirect(w, r, "https://elsewhere.example/", http.StatusFound)
		}
	}))
	defer srv.Close()
	cred := strings.Replace(srv.URL, "http://", "http://user:s3cret@", 1)
	for _, tc := range []struct {
		path  string
		kind  Kind
		words string
	}{
		{"/big/", KindTransport, "reading the agent card: response larger than 1048576 bytes"},
		{"/auth/", KindAuth, "the server asks for Bearer"},
		{"/moved/", KindProtocol, "/moved/.well-known/agent-card.json: HTTP 302"},
	} {
		_, _, err := FetchCard(context.Background(), cred+tc.path+"?token=q1", Options{})
		e, ok := errors.AsType[*Error](err)
		if !ok || e.Kind != tc.kind || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %v, want kind %d with %q", tc.path, err, tc.kind, tc.words)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "q1") {
			t.Errorf("%s: the message leaks the target's credentials: %v", tc.path, err)
		}
	}
}
