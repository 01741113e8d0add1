package client

import (
	"net/http"
	"strings"
	"testing"
)

// A 401 says whether the credential was rejected or none was sent, a 403
// that the agent's limits refuse the method (AUTH-6); the flags are
// suggested only when no credential was sent.
func TestAuthErrorSaysWhatHappened(t *testing.T) {
	challenge := http.Header{"Www-Authenticate": {`Bearer realm="a2a"`}}
	limits := []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32007,"message":"This caller may not use SendMessage"}}`)
	for _, tc := range []struct {
		name      string
		code      int
		header    http.Header
		sent      bool
		body      []byte
		want, not []string
	}{
		{"401 sent", 401, challenge, true, nil, []string{"HTTP 401", "the credential was rejected", "asks for Bearer"}, []string{"--token"}},
		{"401 none", 401, challenge, false, nil, []string{"HTTP 401", "no credential was sent", "pass --token"}, []string{"rejected"}},
		{"403 sent", 403, nil, true, limits, []string{"HTTP 403", "not allowed by the agent's limits: This caller may not use SendMessage"}, []string{"--token"}},
		{"403 none", 403, nil, false, limits, []string{"limits", "SendMessage", "pass --token"}, nil},
		{"403 no body", 403, nil, true, []byte("<html>"), []string{"access denied (HTTP 403)"}, []string{"--token", "limits"}},
	} {
		err := authError(tc.code, tc.header, tc.sent, tc.body)
		if err == nil {
			t.Fatalf("%s: nil", tc.name)
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q lacks %q", tc.name, err, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(err.Error(), n) {
				t.Errorf("%s: %q has %q", tc.name, err, n)
			}
		}
	}
	if authError(200, nil, false, nil) != nil {
		t.Error("a 200 is no auth error")
	}
	if !(Auth{}).sentIn(http.Header{"X-Api-Key": {"k"}}) || (Auth{}).sentIn(http.Header{}) || !(Auth{Token: "t"}).sentIn(nil) {
		t.Error("sentIn")
	}
}
