package caddymodule

import (
	"testing"
	"time"
)

// RPC-17, RPC-18: event_log_size takes 1..4096, dedupe_window a positive
// duration or off.
func TestUnmarshalEventLogAndDedupe(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\nevent_log_size 50\ndedupe_window 90s\n}")
	if err != nil {
		t.Fatal(err)
	}
	if hs.agent.EventLogSize != 50 || time.Duration(hs.agent.DedupeWindow) != 90*time.Second {
		t.Errorf("EventLogSize %d DedupeWindow %v, want 50 and 90s", hs.agent.EventLogSize, time.Duration(hs.agent.DedupeWindow))
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\ndedupe_window off\n}")
	if err != nil || hs.agent.DedupeWindow >= 0 {
		t.Errorf("dedupe_window off: %v, DedupeWindow %v; want negative", err, hs.agent.DedupeWindow)
	}
	for _, bad := range []string{"event_log_size 0", "event_log_size 5000", "event_log_size", "dedupe_window 0s", "dedupe_window soon", "dedupe_window 1m 2m"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// RPC-18: `dedupe extension|always` maps to the handler's Dedupe and to the
// card's idempotent-send extension (window, always); dedupe_window off
// leaves the extension off the card; anything else is refused.
func TestUnmarshalDedupeMode(t *testing.T) {
	hs, err := parseBlock(t, "a2a {\ncard {\nname x\n}\ndedupe always\ndedupe_window 2m\n}")
	if err != nil {
		t.Fatal(err)
	}
	if f := hs.agent.cardFacts(); hs.agent.Dedupe != "always" || !f.DedupeAlways || f.DedupeWindow != 2*time.Minute {
		t.Errorf("dedupe always: Dedupe %q, card always %v window %v; want always, true, 2m", hs.agent.Dedupe, f.DedupeAlways, f.DedupeWindow)
	}
	if err := hs.agent.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\n}")
	if f := hs.agent.cardFacts(); err != nil || hs.agent.Dedupe != "" || f.DedupeAlways || f.DedupeWindow != 10*time.Minute {
		t.Errorf("default: %v, Dedupe %q, card always %v window %v; want extension mode, 10m", err, hs.agent.Dedupe, f.DedupeAlways, f.DedupeWindow)
	}
	hs, err = parseBlock(t, "a2a {\ncard {\nname x\n}\ndedupe extension\ndedupe_window off\n}")
	if err != nil || hs.agent.Dedupe != "extension" || hs.agent.cardFacts().DedupeWindow != 0 {
		t.Errorf("dedupe_window off: %v, card window %v; want no extension", err, hs.agent.cardFacts().DedupeWindow)
	}
	for _, bad := range []string{"dedupe", "dedupe sometimes", "dedupe always extension"} {
		if _, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+bad+"\n}"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	h := &AgentHandler{Dedupe: "never"}
	if err := h.Validate(); err == nil {
		t.Error(`Validate accepted dedupe "never"`)
	}
}
