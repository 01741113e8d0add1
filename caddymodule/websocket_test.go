package caddymodule

import (
	"strings"
	"testing"
)

// TestUnmarshalWebSocket: the websocket option of the a2a directive
// (XPORT-3, Appendix B.1), its default path, sub-options and errors, and
// the card learning the path.
func TestUnmarshalWebSocket(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nwebsocket\n}")
	if err != nil {
		t.Fatal(err)
	}
	if hs.agent.WebSocket == nil || hs.agent.WebSocket.path() != "/ws" || hs.agent.cardFacts().WebSocketPath != "/ws" {
		t.Fatalf("default: %+v card path %q", hs.agent.WebSocket, hs.agent.cardFacts().WebSocketPath)
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\nwebsocket /rpc/ws {\nmax_in_flight 8\nmax_message_bytes 1MiB\norigins app.example.com *.example.org\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	w := hs.agent.WebSocket
	if w.Path != "/rpc/ws" || w.MaxInFlight != 8 || w.MaxMessageBytes != 1<<20 || len(w.Origins) != 2 || hs.agent.cardFacts().WebSocketPath != "/rpc/ws" {
		t.Fatalf("options: %+v", w)
	}
	if hs, _ := parseBlock(t, "a2a {\ncard {\nname x\n}\n}"); hs.agent.WebSocket != nil || hs.agent.cardFacts().WebSocketPath != "" {
		t.Fatal("websocket must be off by default")
	}
	for _, bad := range []string{"websocket ws", "websocket /", "websocket /a /b", "websocket {\nmax_in_flight 0\n}", "websocket {\nmax_message_bytes lots\n}", "websocket {\norigins\n}", "websocket {\nnope 1\n}"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}"); err == nil || !strings.Contains(err.Error(), "websocket") && !strings.Contains(err.Error(), "argument") && !strings.Contains(err.Error(), "size") {
			t.Errorf("%q: err = %v, want a websocket error", bad, err)
		}
	}
}
