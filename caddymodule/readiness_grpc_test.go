package caddymodule

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/internal/readiness"
)

// OPS-8: a config with a dedicated gRPC listener is not ready until the
// app's Start has opened it (the HTTP server answering the probe may be up
// first); a config without one has no such check.
func TestGRPCListenReadiness(t *testing.T) {
	if _, ok := (&App{}).grpcListenCheck(); ok {
		t.Fatal("a config without grpc listen got a grpc_listen check")
	}
	a := &App{grpcListens: []*AgentHandler{{}}, grpcListening: new(atomic.Bool)}
	c, ok := a.grpcListenCheck()
	if !ok || c.Name != "grpc_listen" {
		t.Fatalf("check = %+v, %v", c, ok)
	}
	if err := c.Run(context.Background()); readiness.Reason(err) != readiness.Starting {
		t.Errorf("before Start: %v (reason %q), want %q", err, readiness.Reason(err), readiness.Starting)
	}
	a.grpcListening.Store(true)
	if err := c.Run(context.Background()); err != nil {
		t.Errorf("after Start: %v, want ready", err)
	}
}
