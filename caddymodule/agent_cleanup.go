package caddymodule

import (
	"errors"

	"github.com/caddyserver/caddy/v2"
)

// Cleanup releases the transports of this config generation: the gRPC
// server refuses new calls with UNAVAILABLE and stops once the calls in
// flight have ended (they outlive a reload, as SSE streams do); WebSocket
// connections are closed with 1001 (clients reconnect and resubscribe).
func (h *AgentHandler) Cleanup() error {
	var errs []error
	if h.grpc != nil {
		h.grpc.Close()
	}
	if h.grpcNative != nil {
		h.grpcNative.close() // grpc_listen: as the site's, calls in flight end on their own
	}
	if h.grpcJSONRPC != nil {
		h.grpcJSONRPC.Close()
	}
	if h.ws != nil {
		errs = append(errs, h.ws.Close())
	}
	return errors.Join(errs...)
}

var _ caddy.CleanerUpper = (*AgentHandler)(nil)
