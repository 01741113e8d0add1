// Command caddy is a Caddy binary with the caddy-a2a modules compiled in.
//
// It is what `go build -o bin/caddy ./cmd/caddy` produces; `make build`
// produces the same binary through the xcaddy library from xcaddy.toml.
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/caddy-a2a/caddy-a2a/caddymodule"
)

func main() {
	caddycmd.Main()
}
