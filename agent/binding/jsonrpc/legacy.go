package jsonrpc

import (
	"context"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a/v03"
	"github.com/caddy-a2a/caddy-a2a/agent/store"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// legacy translates a call made with an A2A 0.3 method name (RPC-2,
// legacy_v03) into its 1.0 call: the 1.0 method, the params translated
// 0.3→1.0 and the call served as 1.0 (a 0.3 client sends no A2A-Version
// header). ok is false when legacy_v03 is off or the method is not a 0.3
// one; err is the params' translation failure. Every translated call is
// counted in the legacy counter under its 1.0 method.
func (d *Dispatcher) legacy(c agent.Call, call rpc.Call) (agent.Call, rpc.Call, bool, error) {
	if !d.svc.LegacyV03() {
		return c, call, false, nil
	}
	m10, ok := v03.Method10(call.Method)
	if !ok {
		return c, call, false, nil
	}
	d.svc.RecordLegacyRequest(m10)
	params, err := v03.ParamsTo10(call.Method, call.Params)
	call.Method = m10
	c.Version = a2a.ProtocolVersion
	c.LegacyV03 = true
	if err != nil {
		return c, call, true, err
	}
	call.Params = params
	return c, call, true, nil
}

// legacyStream renders each event of a 1.0 stream for a 0.3 caller: the
// 0.3 event rides in StreamResponse.Legacy, which EventFrame sends.
type legacyStream struct{ agent.Stream }

// Next returns the next event with its 0.3 rendering attached.
func (s legacyStream) Next(ctx context.Context) (a2a.StreamResponse, bool) {
	ev, ok := s.Stream.Next(ctx)
	if ok {
		ev.Legacy = v03.Event03(ev)
	}
	return ev, ok
}

// Buffered forwards to the 1.0 stream (see store.Buffered).
func (s legacyStream) Buffered() bool {
	b, ok := s.Stream.(store.Buffered)
	return ok && b.Buffered()
}

// Ready forwards to the 1.0 stream (see store.Buffered).
func (s legacyStream) Ready() <-chan struct{} {
	if b, ok := s.Stream.(store.Buffered); ok {
		return b.Ready()
	}
	return nil
}

// legacyEvent returns what EventFrame encodes for ev: the 0.3 rendering
// of a legacy stream's event, else ev itself.
func legacyEvent(ev any) any {
	switch v := ev.(type) {
	case a2a.StreamResponse:
		if v.Legacy != nil {
			return v.Legacy
		}
	case *a2a.StreamResponse:
		if v != nil && v.Legacy != nil {
			return v.Legacy
		}
	}
	return ev
}
