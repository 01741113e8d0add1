// Package backends holds the turn backends that front real agents: Exec
// runs a local program, HTTP posts to an upstream service, and OpenAI talks
// to an OpenAI-compatible chat-completions server. Exec and HTTP speak the
// turn-event protocol v1 (NDJSON; see docs/turn-event-v1.schema.json).
// Each implements the contract of package agent/backend; the package
// imports nothing else of agent/, nor Caddy.
package backends
