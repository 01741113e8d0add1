// Package caddymodule holds the Caddy glue of caddy-a2a: modules, Caddyfile
// parsing and subcommands. The protocol logic lives in package agent and push
// delivery in package push; neither imports Caddy.
package caddymodule
