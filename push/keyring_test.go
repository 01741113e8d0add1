package push

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestKeyRingFile covers PUSH-3: created 0600, reopened, rotation keeps old
// values readable, tampering and record swaps are rejected.
func TestKeyRingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "push.keys")
	kr, err := LoadOrCreateKeyRing(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key ring mode %v, err %v; want 0600", st.Mode().Perm(), err)
	}
	aad := SecretAAD("task-1", "cfg-1", "token")
	old, err := kr.Seal("s3cret-token", aad)
	if err != nil || old == "" || strings.Contains(old, "s3cret") {
		t.Fatalf("Seal: %q %v", old, err)
	}
	// Two seals of one value differ (random nonce).
	if again, _ := kr.Seal("s3cret-token", aad); again == old {
		t.Fatal("two seals are identical")
	}
	oldID := kr.ActiveKeyID()
	newID, err := kr.Rotate()
	if err != nil || newID == oldID {
		t.Fatalf("Rotate: %q %v", newID, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode after rotation %v", st.Mode().Perm())
	}
	fresh, _ := kr.Seal("new-token", aad)
	if !strings.Contains(fresh, ":"+newID+":") {
		t.Fatalf("new values must use the new key: %q", fresh)
	}
	// Reopen from disk: both the old and the new value open.
	kr2, err := LoadOrCreateKeyRing(path)
	if err != nil {
		t.Fatal(err)
	}
	if kr2.ActiveKeyID() != newID {
		t.Fatalf("active key after reload %q, want %q", kr2.ActiveKeyID(), newID)
	}
	for sealed, want := range map[string]string{old: "s3cret-token", fresh: "new-token"} {
		if got, err := kr2.Open(sealed, aad); err != nil || got != want {
			t.Fatalf("Open after rotation: %q %v, want %q", got, err, want)
		}
	}
	// Tampered ciphertext, another record's aad, unknown key, garbage.
	b := []byte(old)
	b[len(b)-3] ^= 0x01
	if b[len(b)-3] == old[len(old)-3] {
		t.Fatal("tamper did not change the value")
	}
	for name, tc := range map[string][2]string{
		"tampered":   {string(b), aad},
		"other aad":  {old, SecretAAD("task-2", "cfg-1", "token")},
		"other kind": {old, SecretAAD("task-1", "cfg-1", "credentials")},
		"unknown id": {strings.Replace(old, oldID, "kzzzz", 1), aad},
		"garbage":    {"v1:x", aad},
		"plain":      {"s3cret-token", aad},
	} {
		if _, err := kr2.Open(tc[0], tc[1]); err != ErrDecrypt {
			t.Errorf("%s: Open = %v, want ErrDecrypt", name, err)
		}
	}
	if s, _ := kr.Seal("", aad); s != "" {
		t.Fatal("empty secret must seal to empty")
	}
	// A world-readable key ring is refused.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKeyRing(path); err == nil {
		t.Fatal("a 0644 key ring was accepted")
	}
}

// TestKeyRingFromEnvText: the environment form is read-only and opens
// values sealed by the file it was copied from.
func TestKeyRingFromEnvText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "push.keys")
	kr, err := LoadOrCreateKeyRing(path)
	if err != nil {
		t.Fatal(err)
	}
	sealed, _ := kr.Seal("x", "a")
	text, _ := os.ReadFile(path)
	ro, err := ParseKeyRing(text)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := ro.Open(sealed, "a"); err != nil || got != "x" {
		t.Fatalf("Open: %q %v", got, err)
	}
	if _, err := ro.Rotate(); err == nil {
		t.Fatal("Rotate on a read-only ring succeeded")
	}
	for _, bad := range []string{`{}`, `nope`, `{"active":"k","keys":[{"id":"k","key":"c2hvcnQ="}]}`} {
		if _, err := ParseKeyRing([]byte(bad)); err == nil {
			t.Errorf("ParseKeyRing(%s) accepted", bad)
		}
	}
}

func TestRetryPolicy(t *testing.T) {
	p := RetryPolicy{}.WithDefaults()
	if p.Initial != time.Second || p.Max != time.Minute || p.MaxAttempts != 5 || p.Jitter != 0.2 {
		t.Fatalf("defaults: %+v", p)
	}
	for attempt, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 7: time.Minute, 30: time.Minute} {
		for range 50 {
			d := p.Delay(attempt, 0)
			lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2)
			if d < lo || d > hi {
				t.Fatalf("Delay(%d) = %v, want within [%v, %v]", attempt, d, lo, hi)
			}
		}
	}
	if d := p.Delay(1, 10*time.Second); d != 10*time.Second {
		t.Fatalf("Retry-After 10s → %v", d)
	}
	if d := p.Delay(1, time.Hour); d != time.Minute {
		t.Fatalf("Retry-After is capped at Max: %v", d)
	}
}

// TestSenderOutcomes: status classes, headers and Retry-After.
func TestSenderOutcomes(t *testing.T) {
	var status atomic.Int64
	var lastReq atomic.Pointer[http.Request]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lastReq.Store(r.Clone(r.Context()))
		if status.Load() == 429 {
			w.Header().Set("Retry-After", "7")
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	s := NewSender(&Policy{Allow: mustPrefixes("127.0.0.0/8")}, time.Second)
	for code, want := range map[int]Outcome{200: Delivered, 204: Delivered, 408: Retry, 409: Retry, 425: Retry, 429: Retry,
		500: Retry, 502: Retry, 503: Retry, 400: Failed, 401: Failed, 404: Failed, 410: Failed, 301: Failed} {
		status.Store(int64(code))
		r := s.Send(t.Context(), Delivery{ID: "del-1", URL: srv.URL + "/h", Token: "tk", Scheme: "Basic", Credentials: "dXNlcjpwdw==", Body: []byte(`{"a":1}`), Attempt: 2})
		if r.Outcome != want || r.Status != code {
			t.Errorf("status %d: outcome %v (status %d), want %v", code, r.Outcome, r.Status, want)
		}
		if code == 429 && r.RetryAfter != 7*time.Second {
			t.Errorf("Retry-After: %v", r.RetryAfter)
		}
	}
	req := lastReq.Load()
	if req.Header.Get("Authorization") != "Basic dXNlcjpwdw==" || req.Header.Get(HeaderToken) != "tk" || req.Header.Get(HeaderTokenNoX) != "tk" ||
		req.Header.Get(HeaderDeliveryID) != "del-1" || req.Header.Get(HeaderAttempt) != "2" || req.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("headers: %v", req.Header)
	}
	// Timeout and connection refused are retried.
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { time.Sleep(2 * time.Second) })) // sleep: a receiver slower than the 200ms timeout
	defer slow.Close()
	if r := NewSender(&Policy{Allow: mustPrefixes("127.0.0.0/8")}, 200*time.Millisecond).Send(t.Context(), Delivery{URL: slow.URL, Body: []byte("{}")}); r.Outcome != Retry || r.Reason != "timeout" {
		t.Fatalf("timeout: %+v", r)
	}
	closedURL := srv.URL
	srv.Close()
	if r := s.Send(t.Context(), Delivery{URL: closedURL, Body: []byte("{}")}); r.Outcome != Retry {
		t.Fatalf("refused: %+v", r)
	}
	if d := parseRetryAfter(time.Now().Add(30*time.Second).UTC().Format(http.TimeFormat), time.Now()); d < 28*time.Second || d > 31*time.Second {
		t.Fatalf("Retry-After date: %v", d)
	}
}
