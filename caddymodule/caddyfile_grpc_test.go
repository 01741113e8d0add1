package caddymodule

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// XPORT-2 (Appendix B.1): a bare `grpc` line turns the gRPC binding on and
// the card advertises GRPC after JSONRPC and HTTP+JSON; without it the
// card keeps its default bindings.
func TestUnmarshalGRPC(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc\n}")
	if err != nil {
		t.Fatal(err)
	}
	if !hs.agent.GRPC {
		t.Error("grpc: AgentHandler.GRPC = false")
	}
	want := []string{"JSONRPC", "HTTP+JSON", "GRPC"}
	if got := hs.agent.cardFacts().Bindings; !slices.Equal(got, want) || hs.card.Bindings != nil {
		t.Errorf("card bindings = %v (a2a_card copy %v), want %v derived, no copy", got, hs.card.Bindings, want)
	}
	raw, _ := json.Marshal(hs.agent)
	if !strings.Contains(string(raw), `"grpc":true`) {
		t.Errorf("adapted handler lacks \"grpc\":true: %s", raw)
	}

	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if hs.agent.GRPC || hs.agent.cardFacts().Bindings != nil {
		t.Errorf("without grpc: GRPC %v, card bindings %v", hs.agent.GRPC, hs.agent.cardFacts().Bindings)
	}
	if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc on\n}"); err == nil {
		t.Error("grpc with an argument: no error")
	}
}
