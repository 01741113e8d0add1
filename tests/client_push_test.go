package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// TestClientPushSecretsMasked: `caddy a2a push create|get|list` print the
// notification token and the authentication credentials masked as
// "…(set)" unless --show-secrets, in both output forms.
func TestClientPushSecretsMasked(t *testing.T) {
	gw := harness.StartGateway(t, `a2a {
	card {
		name client-push
	}
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
	}
}`)
	r := clientRun(t, "", nil, "call", "--json", "--no-stream", gw.URL, "push me")
	r.wantCode(t, 0)
	tid, _, _ := finalOf(clientEvents(t, r.Stdout))
	const tok, cred = "tok-s3cret-41", "cred-s3cret-42"
	hook := "http://127.0.0.1:9/hook"
	secrets := []string{"--push-token", tok, "--auth-scheme", "Bearer", "--auth-credentials", cred}

	masked := func(name, out string) {
		t.Helper()
		if strings.Contains(out, tok) || strings.Contains(out, cred) {
			t.Fatalf("%s prints a secret in clear:\n%s", name, out)
		}
		if strings.Count(out, "…(set)") != 2 || !strings.Contains(out, "Bearer") {
			t.Fatalf("%s: want the token and credentials masked as …(set), the scheme shown:\n%s", name, out)
		}
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--json", "--id", "c1", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	masked("push create --json", r.Stdout)
	var cfg a2a.TaskPushNotificationConfig
	if err := json.Unmarshal([]byte(r.Stdout), &cfg); err != nil || cfg.ID != "c1" || cfg.Token != "…(set)" || cfg.Authentication == nil || cfg.Authentication.Credentials != "…(set)" {
		t.Fatalf("push create --json: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--id", "c2", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	masked("push create", r.Stdout)
	for _, args := range [][]string{
		{"push", "get", gw.URL, tid, "c1"},
		{"push", "get", "--json", gw.URL, tid, "c1"},
		{"push", "get", "--binding", "rest", gw.URL, tid, "c1"},
	} {
		r = clientRun(t, "", nil, args...)
		r.wantCode(t, 0)
		masked(strings.Join(args[:3], " "), r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "list", "--json", gw.URL, tid)
	r.wantCode(t, 0)
	if strings.Contains(r.Stdout, tok) || strings.Contains(r.Stdout, cred) || strings.Count(r.Stdout, "…(set)") != 4 {
		t.Fatalf("push list: want two configs with masked secrets:\n%s", r.Stdout)
	}

	// --show-secrets prints them as the server returned them.
	r = clientRun(t, "", nil, "push", "get", "--json", "--show-secrets", gw.URL, tid, "c1")
	r.wantCode(t, 0)
	cfg = a2a.TaskPushNotificationConfig{}
	if err := json.Unmarshal([]byte(r.Stdout), &cfg); err != nil || cfg.Token != tok || cfg.Authentication == nil || cfg.Authentication.Credentials != cred {
		t.Fatalf("push get --show-secrets: %v %s", err, r.Stdout)
	}
	r = clientRun(t, "", nil, "push", "list", "--show-secrets", gw.URL, tid)
	r.wantCode(t, 0)
	if strings.Count(r.Stdout, tok) != 2 || strings.Contains(r.Stdout, "…(set)") {
		t.Fatalf("push list --show-secrets:\n%s", r.Stdout)
	}
	r = clientRun(t, "", nil, append([]string{"push", "create", "--show-secrets", "--id", "c1", gw.URL, tid, hook}, secrets...)...)
	r.wantCode(t, 0)
	if !strings.Contains(r.Stdout, tok) || !strings.Contains(r.Stdout, cred) {
		t.Fatalf("push create --show-secrets:\n%s", r.Stdout)
	}
}
