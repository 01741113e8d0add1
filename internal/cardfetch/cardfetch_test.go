package cardfetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestCardURL checks the one discovery rule (CARD-2, CLI-1): a .json path
// is the card, anything else gets the well-known path; user info always
// goes; only absolute http(s) URLs are accepted.
func TestCardURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example":                       "https://a.example/.well-known/agent-card.json",
		"https://a.example/":                      "https://a.example/.well-known/agent-card.json",
		"http://u:p@a.example:8080/agents/x/?q=1": "http://a.example:8080/agents/x/.well-known/agent-card.json",
		"https://a.example/card.json?v=2":         "https://a.example/card.json?v=2",
	} {
		if got, err := CardURL(in); err != nil || got != want {
			t.Errorf("CardURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a.example", "ftp://a.example", "https://", "::"} {
		if _, err := CardURL(bad); err == nil {
			t.Errorf("CardURL(%q) accepted", bad)
		}
	}
}

// TestRedactURL checks the one redaction helper: no user info, query or
// fragment in messages; an unparsable URL is not echoed.
func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://user:secret@a.example:8443/p/x?token=s3cret#frag": "https://a.example:8443/p/x",
		"https://a.example/card.json":                              "https://a.example/card.json",
		"a.example/x?k=v":                                          "a.example/x",
		"http://a.example/%zz secret":                              "(invalid URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFetch checks the bounded fetch: the headers sent, the size limit
// (a body one byte over fails, one at the limit passes), the status error
// carrying the challenge, and that redirects are not followed by default.
func TestFetch(t *testing.T) {
	var gotAccept, gotVersion, gotAuth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAccept, gotVersion, gotAuth = r.Header.Get("Accept"), r.Header.Get("A2A-Version"), r.Header.Get("Authorization")
		switch r.URL.Path {
		case "/ten":
			w.Write([]byte("0123456789"))
		case "/auth":
			w.Header().Set("WWW-Authenticate", "Bearer")
			w.WriteHeader(http.StatusUnauthorized)
		case "/redirect":
			http.Redirect(w, r, "/ten", http.StatusFound)
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	h := http.Header{"Authorization": {"Bearer t"}, "Accept": {"text/html"}}
	b, err := Fetch(ctx, nil, srv.URL+"/ten", h, 10)
	if err != nil || string(b) != "0123456789" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	if gotAccept != "application/a2a+json, application/json" || gotVersion != "1.0" || gotAuth != "Bearer t" {
		t.Errorf("headers: Accept %q, A2A-Version %q, Authorization %q", gotAccept, gotVersion, gotAuth)
	}
	if _, err := Fetch(ctx, nil, srv.URL+"/ten", nil, 9); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v, want ErrTooLarge", err)
	}
	_, err = Fetch(ctx, nil, srv.URL+"/auth", nil, 0)
	var st *StatusError
	if !errors.As(err, &st) || st.Code != http.StatusUnauthorized || st.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("401: %v", err)
	}
	if _, err := Fetch(ctx, nil, srv.URL+"/redirect", nil, 0); !errors.As(err, &st) || st.Code != http.StatusFound {
		t.Errorf("redirect: %v, want the 302 itself", err)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	_, err = Fetch(ctx, nil, closed.URL, nil, 0)
	var ue *url.Error
	if !errors.As(err, &ue) || strings.Contains(err.Error(), "status") {
		t.Errorf("unreachable: %v, want the client's *url.Error", err)
	}
}
