package caddymodule

import (
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"
)

// TestA2ACommandRegistered: the module registers `caddy a2a` (CLI-1) and
// its CobraFunc builds the command tree of internal/cli.
func TestA2ACommandRegistered(t *testing.T) {
	c, ok := caddycmd.Commands()["a2a"]
	if !ok {
		t.Fatal("the a2a command is not registered")
	}
	cmd := &cobra.Command{Use: "a2a", Short: c.Short}
	c.CobraFunc(cmd)
	for _, name := range []string{"call", "task", "card", "push"} {
		if sub, _, err := cmd.Find([]string{name}); err != nil || sub.Name() != name {
			t.Errorf("caddy a2a %s: not in the tree (%v)", name, err)
		}
	}
}
