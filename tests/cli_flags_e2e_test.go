package tests

// End-to-end tests of the CLI's one set of conventions (CLI-1, CLI-2,
// CARD-7): one -H/--header rule, one vocabulary of card trust flags, one
// usage-error exit code, over the built binary.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIOneTrustVocabulary: the trust flags of `card verify` verify the
// card of the client commands too (card get, task list), --verify-key works
// on `card verify`, and the older --jwks is still accepted everywhere.
func TestCLIOneTrustVocabulary(t *testing.T) {
	t.Parallel()
	gw := startSignedGateway(t, "")
	jwksURL := gw.URL + "/.well-known/jwks.json"
	jwksFile := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(jwksFile, trustGet(t, jwksURL), 0o600); err != nil {
		t.Fatal(err)
	}
	secretEnv := []string{"K=" + trustSecret}
	for _, c := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"card get, hs256 secret", secretEnv, []string{"card", "get", "--hs256-env", "hs-1=K", gw.URL}, 0, `"signatures"`},
		{"card get, wrong secret", []string{"K=" + strings.Repeat("w", 40)}, []string{"card", "get", "--hs256-env", "hs-1=K", gw.URL}, 3, "signature check failed"},
		{"task list, jwks url", nil, []string{"task", "list", "--jwks-url", jwksURL, gw.URL}, 0, "TASK"},
		{"card get, jwks file", nil, []string{"card", "get", "--jwks-file", jwksFile, gw.URL}, 0, `"signatures"`},
		{"card get, old --jwks", nil, []string{"card", "get", "--jwks", jwksURL, gw.URL}, 0, `"signatures"`},
		{"card get, allow-jku without jku", nil, []string{"card", "get", "--allow-jku", gw.URL, gw.URL}, 3, "signature check failed"},
		{"card verify, verify-key", nil, []string{"card", "verify", "--verify-key", jwksFile, gw.URL}, 0, ": ok"},
		{"card verify, old --jwks", nil, []string{"card", "verify", "--jwks", jwksFile, gw.URL}, 0, ": ok"},
		{"card verify, hs256 short secret", []string{"K=short"}, []string{"card", "verify", "--hs256-env", "hs-1=K", gw.URL}, 2, "at least 32 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clientRun(t, "", c.env, c.args...)
			r.wantCode(t, c.code)
			if !strings.Contains(r.Stdout+r.Stderr, c.want) {
				t.Fatalf("output does not mention %q\nstdout: %s\nstderr: %s", c.want, r.Stdout, r.Stderr)
			}
			if strings.Contains(r.Stdout+r.Stderr, trustSecret) {
				t.Fatal("the secret appears in the output")
			}
		})
	}
}

// TestCLIOneHeaderRuleAndUsageExit: `card validate` refuses the headers
// `call` refuses (it used to send a name with a space), `call` refuses a
// control character before sending (it used to fail in the transport with
// exit 3), and `push dead requeue` without an id is a usage error with one
// line (it used to print two and exit 3).
func TestCLIOneHeaderRuleAndUsageExit(t *testing.T) {
	t.Parallel()
	card := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(card, []byte(`{"name":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"validate, bad name", []string{"card", "validate", "-H", "Bad Name: x", card}, `--header "Bad Name"`},
		{"call, bad name", []string{"call", "-H", "Bad Name: x", "http://127.0.0.1:1", "hi"}, `--header "Bad Name"`},
		{"call, control character", []string{"call", "-H", "X-Ctl: a\x7fb", "http://127.0.0.1:1", "hi"}, "control characters"},
		{"validate, control character", []string{"card", "validate", "-H", "X-Ctl: a\x7fb", card}, "control characters"},
		{"requeue without id", []string{"push", "dead", "requeue"}, "give either a delivery id or --all"},
		{"dead without subcommand", []string{"push", "dead"}, "needs a subcommand"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := clientRun(t, "", nil, c.args...)
			r.wantCode(t, 2)
			if !strings.Contains(r.Stderr, c.want) {
				t.Fatalf("stderr %q, want it to mention %q", r.Stderr, c.want)
			}
		})
	}
}
