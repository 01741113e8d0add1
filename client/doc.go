// Package client is an A2A 1.0 client library: Agent Card discovery,
// interface selection (the first supportedInterfaces entry whose binding it
// speaks: JSONRPC or HTTP+JSON; WebSocket and GRPC when forced), one
// Transport per binding (JSON-RPC and HTTP+JSON calls with
// `A2A-Version: 1.0`, streaming over a size-bounded SSE reader, WebSocket
// frames, gRPC), tasks, push configs, authentication headers and card
// signature verification (CLI-1). Its errors are typed by Kind; the CLI
// maps the kinds onto the exit codes of CLI-2.
//
// It has no Caddy or terminal imports; the `caddy a2a` commands that print
// its results live in internal/cli.
package client
