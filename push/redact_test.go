package push

import "testing"

func TestRedactURL(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://hooks.example.com/a2a/cb?token=s3cret", "https://hooks.example.com/…"},
		{"https://user:pass@hooks.example.com:8443/x", "https://hooks.example.com:8443/…"},
		{"http://127.0.0.1:9000", "http://127.0.0.1:9000"},
		{"http://127.0.0.1:9000/", "http://127.0.0.1:9000"},
		{"https://h.example/#frag", "https://h.example/…"},
		{"not a url", "invalid URL"},
		{"://bad", "invalid URL"},
	} {
		if got := RedactURL(tc.in); got != tc.want {
			t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
