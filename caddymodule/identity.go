package caddymodule

import (
	"context"
	"net/http"

	"github.com/caddy-a2a/caddy-a2a/agent"
	"github.com/caddy-a2a/caddy-a2a/agent/auth"
)

// identityOf returns the scopes and claims of an authentication result
// for the agent core (AUTH-8), nil when the credential has neither
// (static tokens, Basic, API keys).
func identityOf(res auth.Result) *agent.Identity {
	if len(res.Scopes) == 0 && len(res.Claims) == 0 {
		return nil
	}
	return &agent.Identity{Scopes: res.Scopes, Claims: res.Claims}
}

// withIdentity returns r carrying the identity of res in its context,
// where every HTTP binding (JSON-RPC, REST, SSE, WebSocket, gRPC) reads it
// into the agent.Call it builds (httpx NewCall).
func withIdentity(r *http.Request, res auth.Result) *http.Request {
	if id := identityOf(res); id != nil {
		return r.WithContext(agent.WithIdentity(r.Context(), id))
	}
	return r
}

// headerIdentity is the site's authenticator for the Redis Streams
// binding, returning the credential's scopes and claims too
// (redisrpc.IdentityAuthenticator).
type headerIdentity struct{ *auth.Authenticator }

// IdentifyHeaders implements redisrpc.IdentityAuthenticator.
func (h headerIdentity) IdentifyHeaders(ctx context.Context, headers map[string]string) (string, *agent.Identity, bool) {
	res, ok := h.CheckHeaders(ctx, headers)
	if !ok {
		return "", nil, false
	}
	return res.Principal, identityOf(res), true
}
