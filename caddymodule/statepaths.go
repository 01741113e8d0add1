package caddymodule

import (
	"github.com/caddyserver/caddy/v2"

	"github.com/caddy-a2a/caddy-a2a/agent"
)

// statePaths are the gateway's state paths of this process (INPUT-1a):
// every a2a data_dir, Caddy's data and config directories and configured
// storage, and the key files modules load (card signing keys, JWKS files).
// Modules add to it at provision, every a2a handler's workspace reads it
// at request time, so the order in which modules provision does not
// matter. Paths are never removed: a path that held state once stays
// denied for the life of the process. Other instances' data directories
// are refused through their marker file (agent.StateMarker).
var statePaths = agent.NewDenyList()

// denyStatePaths adds paths (symlinks resolved) to statePaths.
func denyStatePaths(paths ...string) { statePaths.Add(paths...) }

// denyCaddyState adds Caddy's own state: its data and config directories
// (certificates, keys, autosave.json with the whole config) and the
// configured storage when it lives in files.
func denyCaddyState(ctx caddy.Context) {
	denyStatePaths(caddy.AppDataDir(), caddy.AppConfigDir())
	if fs, ok := ctx.Storage().(interface{ Filename(string) string }); ok {
		denyStatePaths(fs.Filename(""))
	}
}
