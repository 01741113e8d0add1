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

// `grpc { reflection }` turns gRPC server reflection on (grpc_reflection);
// the bare `grpc` leaves it off, and grpc_reflection without grpc fails
// validation.
func TestUnmarshalGRPCReflection(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc {\nreflection\n}\n}")
	if err != nil {
		t.Fatal(err)
	}
	if !hs.agent.GRPC || !hs.agent.GRPCReflection {
		t.Errorf("grpc { reflection }: GRPC %v, GRPCReflection %v", hs.agent.GRPC, hs.agent.GRPCReflection)
	}
	raw, _ := json.Marshal(hs.agent)
	if !strings.Contains(string(raw), `"grpc":true`) || !strings.Contains(string(raw), `"grpc_reflection":true`) {
		t.Errorf("adapted handler: %s", raw)
	}
	if hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ngrpc\n}"); err != nil || hs.agent.GRPCReflection {
		t.Errorf("bare grpc: reflection %v, err %v", hs.agent.GRPCReflection, err)
	}
	for _, bad := range []string{"grpc {\nreflection on\n}", "grpc {\nmirror\n}"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	h := &AgentHandler{GRPCReflection: true}
	if err := h.validateGRPC(); err == nil || !strings.Contains(err.Error(), "grpc_reflection") {
		t.Errorf("grpc_reflection without grpc: err = %v", err)
	}
}
