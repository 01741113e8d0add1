package card

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/jws"
)

func get(t *testing.T, method, url string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

// TestHandlerServesCard (CARD-2, CARD-3): both card paths serve the same
// bytes as application/a2a+json with Cache-Control, a strong ETag and
// Last-Modified; If-None-Match (lists, weak tags, *) gets a bodiless 304;
// other methods get 405 with Allow; other paths are not the handler's.
func TestHandlerServesCard(t *testing.T) {
	h, err := NewHandler(*validConfig(), Options{MaxAge: 90 * time.Second, ModTimes: NewModTimes(0, nil, nil)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, body := get(t, "GET", srv.URL+WellKnownPath, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/a2a+json" ||
		resp.Header.Get("Cache-Control") != "public, max-age=90" || resp.Header.Get("Last-Modified") == "" {
		t.Fatalf("card: %d %v", resp.StatusCode, resp.Header)
	}
	etag := resp.Header.Get("Etag")
	if !strings.HasPrefix(etag, `"`) {
		t.Fatalf("ETag %q is not strong", etag)
	}
	var c a2a.AgentCard
	if err := json.Unmarshal(body, &c); err != nil || c.Name != "iac-code" || c.SupportedInterfaces[0].URL != srv.URL+"/" {
		t.Fatalf("card %s: %v", body, err)
	}
	legacy, lbody := get(t, "GET", srv.URL+LegacyWellKnownPath, nil)
	if legacy.StatusCode != 200 || string(lbody) != string(body) || legacy.Header.Get("Etag") != etag {
		t.Fatalf("legacy path: %d, same body %v", legacy.StatusCode, string(lbody) == string(body))
	}
	for _, inm := range []string{etag, `"x", W/` + etag, "*"} {
		resp, b := get(t, "GET", srv.URL+WellKnownPath, map[string]string{"If-None-Match": inm})
		if resp.StatusCode != http.StatusNotModified || len(b) != 0 || resp.Header.Get("Etag") != etag || resp.Header.Get("Cache-Control") == "" {
			t.Errorf("If-None-Match %s: %d %q %v", inm, resp.StatusCode, b, resp.Header)
		}
	}
	if resp, _ := get(t, "GET", srv.URL+WellKnownPath, map[string]string{"If-None-Match": `"other"`}); resp.StatusCode != 200 {
		t.Errorf("non-matching If-None-Match: %d", resp.StatusCode)
	}
	if resp, b := get(t, "HEAD", srv.URL+WellKnownPath, nil); resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("Etag") != etag {
		t.Errorf("HEAD: %d %q", resp.StatusCode, b)
	}
	if resp, _ := get(t, "POST", srv.URL+WellKnownPath, nil); resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
	if h.Handles(httptest.NewRequest("GET", "/other", nil)) {
		t.Error("the handler claims /other")
	}
}

// TestHandlerForwardedHeaders (CARD-2): X-Forwarded-Proto/Host set the
// interface URLs only from a trusted proxy, each base URL gets its own
// cached rendering, and Last-Modified follows the content, not the host.
func TestHandlerForwardedHeaders(t *testing.T) {
	trusted := false
	h, err := NewHandler(*validConfig(), Options{ModTimes: NewModTimes(0, nil, nil),
		TrustedProxy: func(*http.Request) bool { return trusted }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	fwd := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "pub.example"}
	url := func(hdr map[string]string) (string, string, string) {
		resp, body := get(t, "GET", srv.URL+WellKnownPath, hdr)
		var c a2a.AgentCard
		if err := json.Unmarshal(body, &c); err != nil {
			t.Fatal(err)
		}
		return c.SupportedInterfaces[0].URL, resp.Header.Get("Etag"), resp.Header.Get("Last-Modified")
	}
	direct, directTag, directMod := url(nil)
	if u, tag, _ := url(fwd); u != direct || tag != directTag {
		t.Errorf("untrusted forwarded headers moved the URL: %s", u)
	}
	trusted = true
	u, tag, mod := url(fwd)
	if u != "https://pub.example/" || tag == directTag {
		t.Errorf("trusted proxy: URL %s, ETag %s (direct %s)", u, tag, directTag)
	}
	if mod != directMod {
		t.Errorf("Last-Modified moved with the host: %s vs %s", mod, directMod)
	}
}

// TestHandlerSignsAndServesJWKS (CARD-6): the served card carries one
// signature per key and the JWKS path serves the public keys.
func TestHandlerSignsAndServesJWKS(t *testing.T) {
	signers, err := jws.LoadSigners([]jws.SignKey{{Alg: "hs256", KID: "hs", Secret: strings.Repeat("k", 32)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewHandler(*validConfig(), Options{JWKSPath: "jwks.json"}); err == nil || !strings.Contains(err.Error(), "must start with /") {
		t.Fatalf("relative jwks_path: %v", err)
	}
	if _, err := NewHandler(*validConfig(), Options{MaxAge: -time.Second}); err == nil || !strings.Contains(err.Error(), "must not be negative") {
		t.Fatalf("negative max_age: %v", err)
	}
	h, err := NewHandler(*validConfig(), Options{Signers: signers, JWKSPath: "/.well-known/jwks.json"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, body := get(t, "GET", srv.URL+WellKnownPath, nil)
	var c a2a.AgentCard
	if err := json.Unmarshal(body, &c); err != nil || len(c.Signatures) != 1 {
		t.Fatalf("signatures: %s %v", body, err)
	}
	resp, jwks := get(t, "GET", srv.URL+"/.well-known/jwks.json", nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/jwk-set+json" || !strings.Contains(string(jwks), `"keys"`) {
		t.Fatalf("jwks: %d %s", resp.StatusCode, jwks)
	}
	if strings.Contains(string(jwks), "kkkk") {
		t.Fatal("the JWKS shows the HS256 secret")
	}
}

// TestFileModTimes (CARD-3): first-seen times survive a restart through
// the file, which only the owner can read.
func TestFileModTimes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a2a", "card_modtimes.json")
	first := NewFileModTimes(8, path).FirstSeen("h1")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	restarted := NewFileModTimes(8, path)
	restarted.now = func() time.Time { return first.Add(time.Hour) }
	if again := restarted.FirstSeen("h1"); !again.Equal(first) {
		t.Errorf("after restart %v, want %v", again, first)
	}
	if err := os.WriteFile(path, []byte("{broken"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := NewFileModTimes(8, path).FirstSeen("h1"); got.IsZero() {
		t.Error("a broken file gave a zero time")
	}
}
