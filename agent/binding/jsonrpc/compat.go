package jsonrpc

import (
	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	rpc "github.com/caddy-a2a/caddy-a2a/internal/jsonrpc"
)

// Compat serves the JSON-RPC calls of another version of A2A over the same
// agent.Handler (RPC-2: package jsonrpc03 serves A2A 0.3 with it when
// legacy_v03 is on). The handler never hears of that version: Compat
// translates the call in and the answer out.
type Compat interface {
	// Translate returns the A2A 1.0 call of a call made with one of the
	// version's method names (the 1.0 method and params, the agent.Call
	// served as 1.0); ok is false for any other method. err is a failure
	// to translate the params, answered as an invalid call of the 1.0
	// method.
	Translate(c agent.Call, call rpc.Call) (agent.Call, rpc.Call, bool, error)
	// Handler returns h with the version's own rules on the operations
	// (e.g. which payloads its push configs get); the translated calls run
	// on it.
	Handler(h agent.Handler) agent.Handler
	// Result renders the 1.0 result of method for the caller.
	Result(method string, res any) any
	// Stream renders the events of a 1.0 stream for the caller (see
	// a2a.StreamResponse.Legacy, which EventFrame sends).
	Stream(st agent.Stream) agent.Stream
}

// WithCompat returns a dispatcher like d that also serves the calls of
// c's version (legacy_v03, RPC-2).
func (d *Dispatcher) WithCompat(c Compat) *Dispatcher {
	cp := *d
	cp.compat = c
	cp.compatH = nil
	if c != nil {
		cp.compatH = c.Handler(d.h)
	}
	return &cp
}

// translate returns the handler, call and request that serve call: the
// compat's translation over its handler when call uses one of its method
// names (compat true), else d's handler with the call as it is. err is
// the compat's failure to translate the params.
func (d *Dispatcher) translate(c agent.Call, call rpc.Call) (h agent.Handler, _ agent.Call, _ rpc.Call, compat bool, err error) {
	if d.compat == nil {
		return d.h, c, call, false, nil
	}
	c2, call2, ok, err := d.compat.Translate(c, call)
	if !ok {
		return d.h, c, call, false, nil
	}
	return d.compatH, c2, call2, true, err
}

// legacyEvent returns what EventFrame encodes for ev: the rendering a
// Compat stream attached to the event (StreamResponse.Legacy), else ev
// itself.
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
