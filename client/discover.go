package client

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
	"github.com/caddy-a2a/caddy-a2a/agent/card"
)

// WellKnownCardPath is where the Agent Card is served.
const WellKnownCardPath = card.WellKnownPath

// CardURL returns the URL to fetch the card from for a user-supplied
// target: a URL ending in ".json" is the card itself, anything else is a
// base URL under which the well-known path is appended.
func CardURL(target string) (string, error) {
	u, err := card.DiscoveryURL(target)
	if err != nil {
		return "", usagef("invalid agent URL %q: want http(s)://host[:port][/path]", RedactURL(target))
	}
	return u, nil
}

// RedactURL drops user info and the query from a URL, for messages.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		if len(s) > 80 {
			s = s[:80] + "…"
		}
		return s
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, nil, usagef("invalid agent URL %q", RedactURL(target))
	}
	for k, v := range opts.Headers {
		req.Header[k] = v
	}
	req.Header.Set("Accept", "application/a2a+json, application/json")
	req.Header.Set("A2A-Version", a2a.ProtocolVersion)
	if opts.UserAgent != "" {
		req.Header.Set("User-Agent", opts.UserAgent)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, transportErr("fetching the agent card from "+RedactURL(cardURL), cleanNetErr(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		if e := authError(resp); e != nil {
			return nil, nil, e
		}
		return nil, nil, protocolf("fetching the agent card from %s: HTTP %d", RedactURL(cardURL), resp.StatusCode)
	}
	raw, err := readLimited(resp.Body, MaxCardSize)
	if err != nil {
		return nil, nil, transportErr("reading the agent card", err)
	}
	var card a2a.AgentCard
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil, protocolf("bad agent card at %s: empty response", RedactURL(cardURL))
	}
	if err := json.Unmarshal(raw, &card); err != nil {
		return nil, nil, protocolf("bad agent card at %s: %v", RedactURL(cardURL), err)
	}
	if card.Name == "" || len(card.SupportedInterfaces) == 0 {
		return nil, nil, protocolf("bad agent card at %s: no name or no supportedInterfaces (is this an A2A 1.0 agent?)", RedactURL(cardURL))
	}
	return &card, raw, nil
}

// SelectInterface picks the first interface of the card whose binding the
// client speaks (JSONRPC or HTTP+JSON, protocol version 1.x), or the first
// of the forced binding (jsonrpc, rest, or grpc: GRPC is used only when
// forced).
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
	default:
		return a2a.AgentInterface{}, usagef("unknown binding %q: want jsonrpc, rest, grpc or websocket", binding)
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
		if strings.EqualFold(in.ProtocolBinding, a2a.BindingGRPC) {
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
