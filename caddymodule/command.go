package caddymodule

import (
	"github.com/caddyserver/caddy/v2"
	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/spf13/cobra"

	"github.com/caddy-a2a/caddy-a2a/internal/cli"
)

// init registers `caddy a2a`, the A2A 1.0 client (CLI-1); the command tree,
// its flags and its exit codes (CLI-2) live in internal/cli.
func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "a2a",
		Usage: "<call|task|card|push> ...",
		Short: "A2A 1.0 client: call agents, manage tasks, cards and push configs",
		Long: `The a2a command is a client for A2A 1.0 agents (this gateway or any other).

  caddy a2a call URL [MESSAGE]         send a message (streams by default)
  caddy a2a task get|list|cancel|subscribe
  caddy a2a card get URL
  caddy a2a push create|get|list|delete
  caddy a2a stdio --config FILE        serve a site on stdin/stdout (NDJSON JSON-RPC)

Exit codes: 0 success (including input-required), 1 task failed, canceled or
rejected, 2 usage error, 3 transport, auth or protocol error.`,
		CobraFunc: cli.Build,
	})
	cli.SetStdioOpener(openStdio) // `caddy a2a stdio` (XPORT-4), stdio.go
	cli.SetHost(cli.Host{Exit: exitWithCode, ParseDuration: caddy.ParseDuration})
}

// exitWithCode returns the error caddycmd's Main exits with code from
// (only caddycmd can build it; with a nil error it logs nothing).
func exitWithCode(cmd *cobra.Command, code int) error {
	return caddycmd.WrapCommandFuncForCobra(func(caddycmd.Flags) (int, error) {
		return code, nil
	})(cmd, nil)
}
