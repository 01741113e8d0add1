// Package cli is the `caddy a2a` command tree (CLI-1): cobra commands and
// flags, terminal rendering of calls and streams, and the exit codes of
// CLI-2. It calls the client library (package client) for everything on the
// wire; caddymodule only registers the command with Caddy.
package cli
