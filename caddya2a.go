// Package caddya2a is the root of the caddy-a2a module. Importing it
// registers every caddy-a2a Caddy module, so
// `xcaddy build --with github.com/caddy-a2a/caddy-a2a=.` works, and
// cmd/xbuild uses it to pin the local tree in the build's go.mod.
package caddya2a

import (
	// register the Caddy modules and the a2a directive
	_ "github.com/caddy-a2a/caddy-a2a/caddymodule"
)
