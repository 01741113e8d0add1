package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// runA2A runs `caddy a2a args…` on a fresh tree and returns the error
// Execute returned and the stderr text.
func runA2A(t *testing.T, args ...string) (error, string) {
	t.Helper()
	root, _, errb := buildTestA2A(t)
	root.SetArgs(append([]string{"a2a"}, args...))
	err := root.Execute()
	return err, errb.String()
}

// wantUsage checks the one usage-error convention (CLI-2): exit status 2
// and exactly one "caddy a2a: …" line holding want.
func wantUsage(t *testing.T, args []string, want string) {
	t.Helper()
	err, stderr := runA2A(t, args...)
	if err == nil || err.Error() != "exiting with status 2" {
		t.Errorf("%v: err %v, want exit status 2", args, err)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "caddy a2a: ") || !strings.Contains(stderr, want) {
		t.Errorf("%v: stderr %q, want one line with %q", args, stderr, want)
	}
}

// TestOneHeaderRule: every command that takes -H/--header parses it with
// the same rule — the name an HTTP token, the value free of control
// characters — so `card validate` no longer accepts what `call` refuses.
func TestOneHeaderRule(t *testing.T) {
	card := filepath.Join(t.TempDir(), "card.json")
	if err := os.WriteFile(card, []byte(`{"name":"x"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, h := range []struct{ value, want string }{
		{"nocolon", "--header without ':'"},
		{"Bad Name: x", `--header "Bad Name"`},
		{": x", `--header ""`},
		{"X-Ctl: a\x7fb", "--header X-Ctl: the value holds control characters"},
		{"X-Nl: a\nb", "--header X-Nl: the value holds control characters"},
	} {
		wantUsage(t, []string{"call", "-H", h.value, "http://127.0.0.1:1", "hi"}, h.want)
		wantUsage(t, []string{"card", "validate", "-H", h.value, card}, h.want)
	}
	// A value that is not a header at all is never echoed (it may be a
	// credential typed without the colon).
	if _, stderr := runA2A(t, "call", "-H", "Authorization Bearer s3cret", "http://127.0.0.1:1", "hi"); strings.Contains(stderr, "s3cret") {
		t.Errorf("the header value leaked: %q", stderr)
	}
	root, _, _ := buildTestA2A(t)
	cmd, _, _ := root.Find([]string{"a2a", "call"})
	if err := cmd.Flags().Set("header", "x-ok:   v  "); err != nil {
		t.Fatal(err)
	}
	h, err := headerFromFlags(cmd)
	if err != nil || h.Get("X-Ok") != "v" || len(h) != 1 {
		t.Fatalf("valid header: %v %v", h, err)
	}
}

// TestOneTrustVocabulary: `card verify`, `card validate` and every network
// command take the same card trust flags (CARD-7, CLI-1), including the
// older --jwks spelling.
func TestOneTrustVocabulary(t *testing.T) {
	root, _, _ := buildTestA2A(t)
	var leaves []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			if s.HasSubCommands() {
				walk(s)
			} else if s.Flags().Lookup("token") != nil || s.Name() == "verify" || s.Name() == "validate" {
				leaves = append(leaves, s)
			}
		}
	}
	walk(root)
	if len(leaves) < 12 {
		t.Fatalf("found only %d commands that verify cards", len(leaves))
	}
	for _, c := range leaves {
		for _, name := range []string{"hs256-env", "verify-key", "jwks-file", "jwks-url", "allow-jku", "jwks"} {
			if c.Flags().Lookup(name) == nil {
				t.Errorf("%s has no --%s", c.CommandPath(), name)
			}
		}
	}
	wantUsage(t, []string{"card", "get", "--hs256-env", "nokid", "http://127.0.0.1:1"}, `--hs256-env "nokid": want kid=ENV_VAR`)
	wantUsage(t, []string{"card", "verify", "--hs256-env", "nokid", "x.json"}, `--hs256-env "nokid": want kid=ENV_VAR`)
	wantUsage(t, []string{"card", "verify", "x.json"}, "give at least one key source")
}

// TestUsageErrorsOneConvention: usage errors of every command family exit 2
// with one line — including `push dead requeue` without an id, which
// printed its message and then "exiting with status 2" and exited 3.
func TestUsageErrorsOneConvention(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"push", "dead", "requeue"}, "give either a delivery id or --all"},
		{[]string{"push", "dead", "requeue", "--all", "id"}, "give either a delivery id or --all"},
		{[]string{"push", "dead"}, `"dead" needs a subcommand`},
		{[]string{"push", "dead", "list", "--queue", "nope"}, "--queue must be local-file or redis-streams"},
		{[]string{"card", "init"}, "--name is required"},
		{[]string{"card", "init", "extra"}, "usage: caddy a2a card init"},
		{[]string{"card", "validate"}, "usage: caddy a2a card validate"},
		{[]string{"card", "validate", "--probe", "card.json"}, "--probe needs a URL"},
		{[]string{"card", "validate", "--cert", "c.pem", "http://127.0.0.1:1"}, "--cert and --key go together"},
		{[]string{"card", "validate", "--cert", "/nonexistent/c.pem", "--key", "/nonexistent/c.key", "http://127.0.0.1:1"}, "--cert/--key: not a PEM certificate"},
		{[]string{"card", "validate", "--cacert", "/nonexistent/ca.pem", "http://127.0.0.1:1"}, "--cacert: cannot read the file"},
		{[]string{"task", "list", "--status", "bogus", "http://127.0.0.1:1"}, `--status "bogus"`},
	} {
		wantUsage(t, c.args, c.want)
	}
}
