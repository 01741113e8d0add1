package tests

// Issue 27 item 6 end to end: the a2a_card handler derives what it says
// about the agent (auth schemes, push and its signing keys, thinking
// exposure, resumable streams, idempotent sends, gRPC, WebSocket, the 0.3
// dual card) from the a2a and a2a_auth handlers of its route, so a JSON
// config that copies none of it serves the Caddyfile's card byte for byte;
// the copies an older adapter wrote still work (as overrides); a reload
// derives anew; a card served alone keeps working.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// factFields are the a2a_card JSON fields that copied agent facts before
// issue 27 item 6.
var factFields = []string{"security", "push_notifications", "thinking_types", "legacy_v03", "event_log_size",
	"dedupe_window", "dedupe_always", "push_sign", "websocket_path", "bindings"}

func TestCardFactsDerivedFromAgent(t *testing.T) {
	t.Parallel()
	key := writeECKey(t, t.TempDir())
	gw := harness.StartGatewayWith(t, `	a2a {
		card {
			name facts-agent
			description "Card facts derived from the agent."
			skill echo {
				name Echo
				description "Echoes."
				tags echo
			}
		}
		auth {
			bearer facts-token
		}
		push {
			allow_private_networks 127.0.0.0/8
			sign es256 {
				kid push-1
				key_file `+key+`
				issuer http://127.0.0.1:{{PORT}}
			}
		}
		websocket
		grpc
		legacy_v03
		dedupe always
		event_log_size 50
		thinking_exposure tool_trace raw_thinking
	}`, harness.Options{Admin: true})
	want, wantTag := fetchCard(t, gw, "")
	for _, s := range []string{`"pushNotifications":true`, `"bearerAuth"`, `"eventLogSize":50`, `"always":true`, `"GRPC"`, `"websocket"`, `"raw_thinking"`} {
		if !strings.Contains(string(want), s) {
			t.Fatalf("the Caddyfile's card lacks %s: %s", s, want)
		}
	}
	cfg := runningConfig(t, gw)
	handlers := a2aRouteHandlers(t, cfg)
	for _, f := range factFields {
		if _, ok := handlers[1][f]; ok {
			t.Errorf("adapted a2a_card still copies %q: %v", f, handlers[1])
		}
	}
	handWritten := map[string]any{"handler": "a2a_card", "name": "facts-agent", "description": "Card facts derived from the agent.",
		"skills": []any{map[string]any{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": []any{"echo"}}}}
	agent := handlers[3]
	delete(agent, "card") // the a2a handler's own card is not where the facts come from
	withOverride := cloneMap(handWritten)
	withOverride["event_log_size"] = 7
	noWS := cloneMap(agent)
	delete(noWS, "websocket")

	// A reload derives anew (no websocket), and a set fact overrides.
	got, tag := loadAndFetch(t, gw, cfg, wantTag, handlers[0], withOverride, handlers[2], noWS)
	if strings.Contains(string(got), `"websocket"`) || !strings.Contains(string(got), `"eventLogSize":7`) {
		t.Errorf("reload without websocket, event_log_size 7 on the card: %s", got)
	}
	// The hand-written JSON, no copies: the Caddyfile's card.
	got, tag = loadAndFetch(t, gw, cfg, tag, handlers[0], handWritten, handlers[2], agent)
	if !bytes.Equal(got, want) || tag != wantTag {
		t.Errorf("hand-written JSON card (ETag %s):\n%s\nwant the Caddyfile's (ETag %s):\n%s", tag, got, wantTag, want)
	}
	// A card served alone: its own fields only.
	got, tag = loadAndFetch(t, gw, cfg, tag, handlers[0], handWritten)
	if strings.Contains(string(got), `"pushNotifications":true`) || strings.Contains(string(got), `bearerAuth`) || !strings.Contains(string(got), `"facts-agent"`) {
		t.Errorf("card alone: %s", got)
	}
	// The copies an older adapter wrote: the same card.
	old := cloneMap(handWritten)
	push, _ := agent["push"].(map[string]any)
	for k, v := range map[string]any{
		"security": map[string]any{"bearer": true, "from_env": true}, "push_notifications": true,
		"thinking_types": []any{"tool_trace", "raw_thinking"}, "legacy_v03": true, "event_log_size": 50,
		"dedupe_window": int64(10 * time.Minute), "dedupe_always": true, "push_sign": push["sign"],
		"websocket_path": "/ws", "bindings": []any{"JSONRPC", "HTTP+JSON", "GRPC"},
	} {
		old[k] = v
	}
	got, tag = loadAndFetch(t, gw, cfg, tag, handlers[0], old, handlers[2], agent)
	if !bytes.Equal(got, want) || tag != wantTag {
		t.Errorf("JSON with the old copies (ETag %s):\n%s\nwant the Caddyfile's (ETag %s):\n%s", tag, got, wantTag, want)
	}
	jwks := harness.At(gw.URL+"/.well-known/jwks.json").Do(t, http.MethodGet, "")
	if jwks.StatusCode != http.StatusOK || !strings.Contains(string(jwks.Raw), `"push-1"`) {
		t.Errorf("JWKS: %d %s, want the push key", jwks.StatusCode, jwks.Raw)
	}
}

// fetchCard returns the card's bytes and ETag once its ETag is not prev
// (a reload took effect).
func fetchCard(t *testing.T, gw *harness.Gateway, prev string) ([]byte, string) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		r, err := harness.At(gw.URL+"/.well-known/agent-card.json", harness.Client(client)).Send(http.MethodGet, "")
		if err == nil && r.StatusCode == http.StatusOK && r.Header.Get("ETag") != prev {
			return r.Raw, r.Header.Get("ETag")
		}
		if time.Now().After(deadline) {
			t.Fatalf("card: still ETag %s (err %v)", prev, err)
		}
	}
}

// runningConfig is the gateway's running config, from the admin endpoint.
func runningConfig(t *testing.T, gw *harness.Gateway) map[string]any {
	t.Helper()
	r := harness.At(gw.AdminURL+"/config/").Do(t, http.MethodGet, "")
	var cfg map[string]any
	if err := json.Unmarshal(r.Raw, &cfg); err != nil {
		t.Fatalf("config: %v: %s", err, r.Raw)
	}
	return cfg
}

// a2aRouteHandlers are the handlers of the route holding the a2a_card
// (a2a_health, a2a_card, a2a_auth, a2a).
func a2aRouteHandlers(t *testing.T, cfg map[string]any) []map[string]any {
	t.Helper()
	list := findHandleList(cfg)
	if len(list) != 4 {
		t.Fatalf("no a2a route of 4 handlers in %v", cfg)
	}
	out := make([]map[string]any, len(list))
	for i, h := range list {
		out[i] = h.(map[string]any)
	}
	return out
}

// findHandleList finds the handler list holding the a2a_card in v.
func findHandleList(v any) []any {
	switch x := v.(type) {
	case map[string]any:
		if l, ok := x["handle"].([]any); ok {
			for _, h := range l {
				if m, ok := h.(map[string]any); ok && m["handler"] == "a2a_card" {
					return l
				}
			}
		}
		for _, c := range x {
			if l := findHandleList(c); l != nil {
				return l
			}
		}
	case []any:
		for _, c := range x {
			if l := findHandleList(c); l != nil {
				return l
			}
		}
	}
	return nil
}

// loadAndFetch loads cfg with the a2a route's handlers replaced by
// handlers and returns the card once its ETag is not prev.
func loadAndFetch(t *testing.T, gw *harness.Gateway, cfg map[string]any, prev string, handlers ...map[string]any) ([]byte, string) {
	t.Helper()
	b, _ := json.Marshal(cfg)
	var next map[string]any
	_ = json.Unmarshal(b, &next)
	list := findHandleList(next)
	list = list[:0]
	for _, h := range handlers {
		list = append(list, h)
	}
	setHandleList(next, list)
	body, _ := json.Marshal(next)
	r := harness.At(gw.AdminURL+"/load").Do(t, http.MethodPost, string(body), harness.Header("Content-Type", "application/json"))
	if r.StatusCode != http.StatusOK {
		t.Fatalf("load: %d %s\nconfig: %s", r.StatusCode, r.Raw, body)
	}
	return fetchCard(t, gw, prev)
}

// setHandleList replaces the handler list holding the a2a_card in v.
func setHandleList(v any, list []any) bool {
	switch x := v.(type) {
	case map[string]any:
		if l, ok := x["handle"].([]any); ok && findHandleList(map[string]any{"handle": l}) != nil {
			x["handle"] = list
			return true
		}
		for _, c := range x {
			if setHandleList(c, list) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if setHandleList(c, list) {
				return true
			}
		}
	}
	return false
}

// cloneMap copies a decoded JSON object (deeply).
func cloneMap(m map[string]any) map[string]any {
	b, err := json.Marshal(m)
	if err != nil {
		panic(fmt.Sprint("cloneMap: ", err))
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}
