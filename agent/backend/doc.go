// Package backend is the contract between the A2A service and the agents
// it fronts (TURN-1): a Backend runs one turn of a TurnRequest and emits
// turn-event protocol Events (Appendix A; docs/turn-event-v1.schema.json)
// through Emit; a ProtocolError or TurnError says how a turn failed
// (TURN-8). EchoBackend is the built-in deterministic backend (TURN-2).
//
// It imports only agent/a2a: backends (package agent/backends, and any
// out-of-tree ones) implement it without depending on the service.
package backend
