package card

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TURN-10: an agent served under a path prefix advertises every interface
// under it, for request-derived and public_url base URLs alike.
func TestHandlerPathPrefix(t *testing.T) {
	for _, tc := range []struct{ publicURL, want string }{
		{"", "http://gw.test:8080/planner/"},
		{"https://gw.example.com", "https://gw.example.com/planner/"},
		{"https://gw.example.com/", "https://gw.example.com/planner/"},
	} {
		cfg := *validConfig()
		cfg.PublicURL = tc.publicURL
		h, err := NewHandler(cfg, Options{ModTimes: NewModTimes(0, nil, nil), PathPrefix: "/planner", Tenant: "planner",
			Interfaces: []Interface{{Binding: "websocket", Path: "/ws", WebSocket: true}}})
		if err != nil {
			t.Fatal(err)
		}
		// The handler sees the stripped path.
		r := httptest.NewRequest("GET", "http://gw.test:8080"+WellKnownPath, nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			t.Fatalf("HTTP %d", w.Code)
		}
		var c a2a.AgentCard
		if err := json.Unmarshal(w.Body.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.SupportedInterfaces) != 3 {
			t.Fatalf("interfaces: %+v", c.SupportedInterfaces)
		}
		for _, i := range c.SupportedInterfaces {
			if i.Tenant != "planner" {
				t.Errorf("interface %s: tenant %q", i.ProtocolBinding, i.Tenant)
			}
		}
		for _, i := range c.SupportedInterfaces[:2] {
			if i.URL != tc.want {
				t.Errorf("public_url %q: interface URL %q, want %q", tc.publicURL, i.URL, tc.want)
			}
		}
		if ws := c.SupportedInterfaces[2].URL; ws != "ws"+tc.want[len("http"):]+"ws" {
			t.Errorf("public_url %q: websocket URL %q", tc.publicURL, ws)
		}
		if got := h.Runtime(r).BaseURL; got != tc.want {
			t.Errorf("Runtime base URL %q, want %q", got, tc.want)
		}
	}
	for _, bad := range []string{"planner", "/planner/"} {
		if _, err := NewHandler(*validConfig(), Options{PathPrefix: bad}); err == nil {
			t.Errorf("path prefix %q accepted", bad)
		}
	}
}
