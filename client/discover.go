package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/internal/cardfetch"
)

// WellKnownCardPath is where the Agent Card is served.
const WellKnownCardPath = cardfetch.WellKnownPath

// CardURL returns the URL to fetch the card from for a user-supplied
// target: a URL ending in ".json" is the card itself, anything else is a
// base URL under which the well-known path is appended (cardfetch.CardURL;
// a bad target is a usage error).
func CardURL(target string) (string, error) {
	u, err := cardfetch.CardURL(target)
	if err != nil {
		return "", usagef("invalid agent URL %q: want http(s)://host[:port][/path]", cardfetch.RedactURL(target))
	}
	return u, nil
}

// FetchCard downloads and decodes the Agent Card for target (see CardURL).
func FetchCard(ctx context.Context, target string, opts Options) (*a2a.AgentCard, []byte, error) {
	cardURL, err := CardURL(target)
	if err != nil {
		return nil, nil, err
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient()
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	h := opts.Headers.Clone()
	if opts.UserAgent != "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("User-Agent", opts.UserAgent)
	}
	raw, err := cardfetch.Fetch(ctx, hc, cardURL, h, MaxCardSize)
	if err != nil {
		return nil, nil, fetchErr(cardURL, err, Auth{APIKeyHeader: opts.Auth.APIKeyHeader}.sentIn(h))
	}
	var card a2a.AgentCard
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, protocolf("bad agent card at %s: empty response", cardfetch.RedactURL(cardURL))
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return nil, nil, protocolf("bad agent card at %s: %v", cardfetch.RedactURL(cardURL), err)
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, nil, protocolf("bad agent card at %s: no name or no supportedInterfaces (is this an A2A 1.0 agent?)", cardfetch.RedactURL(cardURL))
	}
	return &card, raw, nil
}

// fetchErr is the client error of a failed card fetch.
// sent says whether the request carried a credential.
func fetchErr(cardURL string, err error, sent bool) error {
	if st, ok := errors.AsType[*cardfetch.StatusError](err); ok {
		if e := authError(st.Code, st.Header, sent, nil); e != nil {
			return e
		}
		return protocolf("fetching the agent card from %s: HTTP %d", cardfetch.RedactURL(cardURL), st.Code)
	}
	if errors.Is(err, cardfetch.ErrTooLarge) {
		return transportErr("reading the agent card", fmt.Errorf("response larger than %d bytes", MaxCardSize))
	}
	if re, ok := errors.AsType[*cardfetch.ReadError](err); ok {
		return transportErr("reading the agent card", re.Err)
	}
	return transportErr("fetching the agent card from "+cardfetch.RedactURL(cardURL), cleanNetErr(err))
}

// SelectInterface picks the first interface of the card whose binding the
// client speaks (JSONRPC or HTTP+JSON, protocol version 1.x), or the first
// of the forced binding (jsonrpc, rest, grpc, grpc-jsonrpc or websocket:
// those three are used only when forced).
func SelectInterface(card *a2a.AgentCard, binding string) (a2a.AgentInterface, error) {
	want := map[string]bool{a2a.BindingJSONRPC: true, a2a.BindingHTTPJSON: true}
	switch strings.ToLower(binding) {
	case BindingAuto:
	case BindingJSONRPC:
		want = map[string]bool{a2a.BindingJSONRPC: true}
	case BindingREST, "http+json":
		want = map[string]bool{a2a.BindingHTTPJSON: true}
	case BindingWebSocket:
		want = map[string]bool{strings.ToUpper(a2a.BindingWebSocket): true}
	case BindingGRPC:
		want = map[string]bool{a2a.BindingGRPC: true}
	case BindingGRPCJSONRPC:
		want = map[string]bool{strings.ToUpper(a2a.BindingGRPCJSONRPC): true}
	default:
		return a2a.AgentInterface{}, usagef("unknown binding %q: want jsonrpc, rest, grpc, grpc-jsonrpc or websocket", binding)
	}
	var seen []string
	for _, in := range card.SupportedInterfaces {
		seen = append(seen, in.ProtocolBinding+"@"+in.ProtocolVersion)
		if !want[strings.ToUpper(in.ProtocolBinding)] {
			continue
		}
		if v := in.ProtocolVersion; v != "" && v != "1" && !strings.HasPrefix(v, "1.") {
			continue
		}
		if strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC) || strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPCJSONRPC) {
			if _, ok := grpcTarget(in.URL); !ok {
				continue
			}
			return in, nil
		}
		u, err := url.Parse(in.URL)
		schemes := map[string]bool{"http": true, "https": true}
		if strings.EqualFold(in.ProtocolBinding, a2a.BindingWebSocket) {
			schemes = map[string]bool{"ws": true, "wss": true}
		}
		if err != nil || !schemes[u.Scheme] || u.Host == "" {
			continue
		}
		return in, nil
	}
	return a2a.AgentInterface{}, protocolf("the agent card offers no interface this client speaks (JSONRPC or HTTP+JSON, version 1.x); it offers %s", strings.Join(seen, ", "))
}
