package cli

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/agent/store"
	"github.com/caddy-a2a/caddy-a2a/client"
)

// buildTestA2A builds a fresh `caddy a2a` tree as Caddy would.
func buildTestA2A(t *testing.T) (*cobra.Command, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	root := &cobra.Command{Use: "caddy"}
	cmd := &cobra.Command{Use: "a2a"}
	Build(cmd)
	root.AddCommand(cmd)
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	return root, &out, &errb
}

func TestA2ACommandTree(t *testing.T) {
	root, _, _ := buildTestA2A(t)
	for _, path := range [][]string{
		{"a2a", "call"}, {"a2a", "task", "get"}, {"a2a", "task", "list"}, {"a2a", "task", "cancel"},
		{"a2a", "task", "subscribe"}, {"a2a", "card", "get"}, {"a2a", "push", "create"},
		{"a2a", "push", "get"}, {"a2a", "push", "list"}, {"a2a", "push", "delete"},
		// task and tasks are one parent: either spelling finds every child.
		{"a2a", "tasks", "list"}, {"a2a", "tasks", "prune"}, {"a2a", "task", "prune"}, {"a2a", "tasks", "subscribe"},
	} {
		c, rest, err := root.Find(path)
		if err != nil || len(rest) != 0 || c.Name() != path[len(path)-1] {
			t.Errorf("%v: found %q rest %v err %v", path, c.Name(), rest, err)
		}
	}
	// Parents are created once even when several files add to them.
	a2a, _, _ := root.Find([]string{"a2a"})
	seen := map[string]int{}
	for _, c := range a2a.Commands() {
		seen[c.Name()]++
	}
	for name, n := range seen {
		if n != 1 {
			t.Errorf("%d %q commands under a2a", n, name)
		}
	}
}

// TestA2ASubcommandHook: a function registered with registerSubcommand
// can add to an existing parent by name.
func TestA2ASubcommandHook(t *testing.T) {
	var ran bool
	registerSubcommand(func(root *cobra.Command) {
		childCommand(root, "card", "Work with Agent Cards").AddCommand(&cobra.Command{
			Use: "hooktest", Short: "test",
			RunE: runE(func(*cobra.Command, []string) error { ran = true; return usagef("bad hook args") }),
		})
	})
	defer func() {
		subcommandsMu.Lock()
		subcommands = subcommands[:len(subcommands)-1]
		subcommandsMu.Unlock()
	}()
	root, _, errb := buildTestA2A(t)
	root.SetArgs([]string{"a2a", "card", "hooktest"})
	err := root.Execute()
	if !ran || err == nil || err.Error() != "exiting with status 2" {
		t.Fatalf("hook command: ran %v err %v", ran, err)
	}
	if errb.String() != "caddy a2a: bad hook args\n" {
		t.Fatalf("stderr %q", errb.String())
	}
	if c, _, _ := root.Find([]string{"a2a", "card", "get"}); c.Name() != "get" {
		t.Fatal("card get lost after the hook added to card")
	}
}

// TestA2AExitCodes checks CLI-2 for errors raised before any network use.
func TestA2AExitCodes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
		line string
	}{
		{[]string{"a2a", "call", "--nope"}, "exiting with status 2", "unknown flag: --nope"},
		{[]string{"a2a", "task", "get", "http://x"}, "exiting with status 2", "usage: caddy a2a task get"},
		{[]string{"a2a", "task", "bogus"}, "exiting with status 2", `unknown subcommand "bogus"`},
		{[]string{"a2a"}, "exiting with status 2", "missing subcommand"},
		{[]string{"a2a", "call", "--basic", "nocolon", "http://x", "hi"}, "exiting with status 2", "--basic wants user:pass"},
		{[]string{"a2a", "call", "http://127.0.0.1:1", "hi"}, "exiting with status 3", "connection refused"},
	} {
		root, _, errb := buildTestA2A(t)
		root.SetArgs(c.args)
		err := root.Execute()
		if err == nil || err.Error() != c.want {
			t.Errorf("%v: err %v, want %q", c.args, err, c.want)
		}
		if strings.Count(errb.String(), "\n") != 1 || !strings.HasPrefix(errb.String(), "caddy a2a: ") || !strings.Contains(errb.String(), c.line) {
			t.Errorf("%v: stderr %q, want one line with %q", c.args, errb.String(), c.line)
		}
	}
	// CLI-2: each kind of client error, the CLI's usage errors and an
	// explicit exit code keep their exit codes.
	for err, want := range map[error]int{
		nil:                                         0,
		&client.Error{Kind: client.KindTask}:        1,
		&client.Error{Kind: client.KindUsage}:       2,
		usagef("bad flag"):                          2,
		fmt.Errorf("wrapped: %w", usagef("x")):      2,
		&client.Error{Kind: client.KindTransport}:   3,
		&client.Error{Kind: client.KindAuth}:        3,
		&client.Error{Kind: client.KindProtocol}:    3,
		&client.Error{Kind: client.KindInterrupted}: 130,
		exitWith(1, usagef("card has errors")):      1,
	} {
		if got := exitCodeOf(err); got != want {
			t.Errorf("exitCodeOf(%v) = %d, want %d", err, got, want)
		}
	}
	if got := exitCodeOf(errors.New("x")); got != 3 {
		t.Errorf("plain error exit code %d", got)
	}
}

// An empty dead-letter list says so (on stderr, stdout stays empty).
func TestPushDeadListEmpty(t *testing.T) {
	dir := t.TempDir()
	st, err := store.OpenSQLite(filepath.Join(dir, "a2a.db"), store.SQLiteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = st.Close()
	root, out, errb := buildTestA2A(t)
	root.SetArgs([]string{"a2a", "push", "dead", "list", "--data-dir", dir})
	if err := root.Execute(); err != nil {
		t.Fatalf("push dead list: %v (stderr %q)", err, errb.String())
	}
	if out.String() != "" || !strings.Contains(errb.String(), "no dead letters") {
		t.Fatalf("stdout %q stderr %q, want \"no dead letters\" on stderr", out.String(), errb.String())
	}
}
