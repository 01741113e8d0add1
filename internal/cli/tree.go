package cli

import (
	"slices"
	"sync"

	"github.com/spf13/cobra"
)

var (
	subcommandsMu sync.Mutex
	subcommands   []func(root *cobra.Command)
)

// registerSubcommand adds a function that attaches subcommands to the
// `caddy a2a` command. Call it from init() in the file that defines the
// subcommand. add receives the `a2a` command; use childCommand to find or
// create an intermediate parent (`card`, `push`, `task`) so that files can
// add children to the same parent in any order:
//
//	func init() {
//		registerSubcommand(func(root *cobra.Command) {
//			card := childCommand(root, "card", "Work with Agent Cards")
//			card.AddCommand(&cobra.Command{Use: "validate FILE", RunE: runE(runCardValidate)})
//		})
//	}
func registerSubcommand(add func(root *cobra.Command)) {
	subcommandsMu.Lock()
	defer subcommandsMu.Unlock()
	subcommands = append(subcommands, add)
}

// childCommand returns parent's direct child command called name, creating
// a parent-only command with the given short help when there is none yet.
func childCommand(parent *cobra.Command, name, short string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name {
			if c.Short == "" {
				c.Short = short
			}
			return c
		}
	}
	c := &cobra.Command{Use: name, Short: short, Args: anyArgs}
	c.RunE = runE(func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usagef("unknown subcommand %q of %q (see '%s --help')", args[0], name, cmd.CommandPath())
		}
		return usagef("%q needs a subcommand (see '%s --help')", name, cmd.CommandPath())
	})
	parent.AddCommand(c)
	return c
}

// taskCommand is `caddy a2a task`, also spelled `tasks`: the commands on
// an agent's tasks (get, list, cancel, subscribe) and on a data
// directory's task store (prune) share one parent, so either spelling
// finds every one of them.
func taskCommand(root *cobra.Command) *cobra.Command {
	c := childCommand(root, "task", "Inspect and control tasks (also spelled tasks); prune a data directory's task store")
	if !slices.Contains(c.Aliases, "tasks") {
		c.Aliases = append(c.Aliases, "tasks")
	}
	return c
}

// anyArgs lets a parent command's RunE report unknown subcommands itself,
// so they exit with the usage code.
func anyArgs(*cobra.Command, []string) error { return nil }

// Build configures the `caddy a2a` command tree (CLI-1) on cmd: it runs
// every function registered with registerSubcommand. caddymodule passes it
// to Caddy as the command's CobraFunc.
func Build(cmd *cobra.Command) {
	cmd.Args = anyArgs
	cmd.RunE = runE(func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return usagef("missing subcommand (see 'caddy a2a --help')")
		}
		return usagef("unknown subcommand %q (see 'caddy a2a --help')", args[0])
	})
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return finish(c, usagef("%v", err))
	})
	subcommandsMu.Lock()
	adds := append([]func(*cobra.Command){}, subcommands...)
	subcommandsMu.Unlock()
	for _, add := range adds {
		add(cmd)
	}
}
