// Package agent is the protocol core of caddy-a2a: a transport-neutral A2A
// 1.0 service (one method per operation, taking a Call — principal, tenant,
// base URL, version, extensions — and applying the owner scope itself), the
// live runs of turns (their events go out on a store.EventBus), the
// conversation-context manager and the turn engine that runs turns through
// a backend (the contract and the built-in echo backend are package
// agent/backend). The HTTP bindings on top of it (JSON-RPC, HTTP+JSON,
// artifact downloads) are package agent/binding and its subpackages.
//
// It imports nothing from Caddy nor net/http: package caddymodule wires it
// into Caddy.
package agent
