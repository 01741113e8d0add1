package card

import (
	"testing"

	"github.com/caddy-a2a/caddy-a2a/agent/a2a"
)

// TestInterfaceURL: the WebSocket interface follows the base URL's scheme
// (ws for http, wss for https) and path (XPORT-3).
func TestInterfaceURL(t *testing.T) {
	i := Interface{Binding: a2a.BindingWebSocket, Path: "/ws", WebSocket: true}
	for base, want := range map[string]string{
		"http://h:8080/":        "ws://h:8080/ws",
		"https://h/":            "wss://h/ws",
		"https://h/agents/one/": "wss://h/agents/one/ws",
	} {
		if got := i.URL(base); got != want {
			t.Errorf("URL(%q) = %q, want %q", base, got, want)
		}
	}
	c := Build(&Config{Name: "n"}, Runtime{BaseURL: "https://h/", Interfaces: []Interface{i}})
	if n := len(c.SupportedInterfaces); n != 3 || c.SupportedInterfaces[2].ProtocolBinding != "websocket" || c.SupportedInterfaces[2].URL != "wss://h/ws" {
		t.Fatalf("interfaces: %+v", c.SupportedInterfaces)
	}
	if c := Build(&Config{Name: "n"}, Runtime{BaseURL: "https://h/"}); len(c.SupportedInterfaces) != 2 {
		t.Fatalf("without the binding: %+v", c.SupportedInterfaces)
	}
}
