// Package client is the A2A 1.0 client behind `caddy a2a`: Agent Card
// discovery, interface selection (the first supportedInterfaces entry whose
// binding it speaks: JSONRPC or HTTP+JSON), JSON-RPC and HTTP+JSON calls
// with `A2A-Version: 1.0`, a size-bounded SSE reader, authentication
// headers, output rendering for terminals, pipes and NDJSON, and the exit
// codes of gateway.md CLI-2.
//
// It has no Caddy imports; caddymodule/command.go only maps cobra flags onto
// the option structs here and calls the command functions (Call, TaskGet, …).
package client
