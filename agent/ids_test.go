package agent

import (
	"testing"

	"github.com/google/uuid"
)

// TestNewIDIsOrderedVersion7: newID mints RFC 9562 version 7 ids that sort
// in the order they were minted, at one allocation each.
func TestNewIDIsOrderedVersion7(t *testing.T) {
	prev := ""
	for i := range 20000 {
		id := newID()
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 || u.String() != id {
			t.Fatalf("newID() = %q: version %v, variant %v, err %v", id, u.Version(), u.Variant(), err)
		}
		if id <= prev {
			t.Fatalf("id %d %q does not sort after %q", i, id, prev)
		}
		prev = id
	}
	if n := testing.AllocsPerRun(100, func() { _ = newID() }); n > 1 && !raceEnabled {
		t.Errorf("newID: %v allocations, want 1", n)
	}
}

// TestCorrelationID: 8 lowercase hex digits, random, one allocation.
func TestCorrelationID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		c := newCorrelationID()
		if len(c) != 8 || !validHex(c) {
			t.Fatalf("newCorrelationID() = %q", c)
		}
		seen[c] = true
	}
	if len(seen) < 99 {
		t.Errorf("%d distinct correlation ids of 100", len(seen))
	}
	if n := testing.AllocsPerRun(100, func() { _ = newCorrelationID() }); n > 1 && !raceEnabled {
		t.Errorf("newCorrelationID: %v allocations, want 1", n)
	}
}

func validHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// TestAgentMessage: one text part holding the text, a fresh id, two
// allocations in all (the block and the id).
func TestAgentMessage(t *testing.T) {
	m := agentMessage("c1", "t1", "hello")
	if m.ContextID != "c1" || m.TaskID != "t1" || m.Role != "ROLE_AGENT" || len(m.Parts) != 1 || m.Parts[0].Text == nil || *m.Parts[0].Text != "hello" || m.Parts[0].Kind() != "text" {
		t.Fatalf("agentMessage = %+v", m)
	}
	if m2 := agentMessage("c1", "t1", "hello"); m2.MessageID == m.MessageID || m2.Parts[0].Text == m.Parts[0].Text {
		t.Error("two agent messages share an id or a text")
	}
	if n := testing.AllocsPerRun(100, func() { _ = agentMessage("c", "t", "x") }); n > 2 && !raceEnabled {
		t.Errorf("agentMessage: %v allocations, want 2", n)
	}
}
