package agent

import (
	"context"
	"sync/atomic"
)

// NewHandler returns s behind the interceptors every binding needs, built
// once per site and shared by its bindings, outermost first: request
// metrics (caddy_a2a_requests_total by Call.Binding, OPS-2), the version
// and extension rules (RPC-2, RPC-3; the activated extensions go to
// Call.Info for the binding to echo), the open-stream gauge (OPS-2), the
// caller's limits (AUTH-6, AUTH-8), the skills' required scopes (AUTH-8),
// then extra. A binding that holds the result calls no hook of the
// service.
func NewHandler(s *Service, extra ...Interceptor) Handler {
	ics := append([]Interceptor{s.countRequest, s.negotiateCall, s.countStream, s.limit, s.skillScopes}, extra...)
	return Chain(s, ics...)
}

// countRequest counts every answered call by binding, method and outcome;
// artifact downloads are not A2A requests and are not counted.
func (s *Service) countRequest(ctx context.Context, inv *Invocation, next Next) (any, error) {
	res, err := next(ctx, inv)
	if inv.Method != MethodOpenArtifact {
		s.cfg.Metrics.request(s.cfg.AgentName, inv.Call.Binding, inv.Method, err)
	}
	return res, err
}

// negotiateCall applies the version and extension rules (negotiate) to
// every A2A call, invalid ones included (not to messages the carrier
// refused unread, nor to artifact downloads), and records the activated
// extensions in the call's RequestInfo.
func (s *Service) negotiateCall(ctx context.Context, inv *Invocation, next Next) (any, error) {
	if inv.Unread || inv.Method == MethodOpenArtifact {
		return next(ctx, inv)
	}
	active, err := s.negotiate(inv.Call)
	if err != nil {
		return nil, err
	}
	inv.Call.Info.setExtensions(active)
	return next(ctx, inv)
}

// countStream counts each stream a call opens in the open_streams gauge
// of the service's agent until it is closed or detached.
func (s *Service) countStream(ctx context.Context, inv *Invocation, next Next) (any, error) {
	res, err := next(ctx, inv)
	if st, ok := res.(Stream); ok && err == nil && st != nil {
		s.hub.streams.add(s.cfg.AgentName, 1)
		return &countedStream{Stream: st, hub: s.hub, agent: s.cfg.AgentName}, nil
	}
	return res, err
}

// countedStream is a Stream counted in its hub's open-stream gauge until
// its first Close or Detach.
type countedStream struct {
	Stream
	hub   *Hub
	agent string // the agent label it is counted under
	done  atomic.Bool
}

// release takes the stream out of the gauge, once.
func (c *countedStream) release() {
	if c.done.CompareAndSwap(false, true) {
		c.hub.streams.add(c.agent, -1)
	}
}

// Close implements Stream.
func (c *countedStream) Close() {
	c.Stream.Close()
	c.release()
}

// Detach implements Stream.
func (c *countedStream) Detach() {
	c.Stream.Detach()
	c.release()
}
