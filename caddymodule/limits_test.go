package caddymodule

import (
	"strings"
	"testing"
)

// TestUnmarshalLimits: limits blocks (AUTH-6) parse into per-principal
// rules; bad methods, rates and duplicates are config errors.
func TestUnmarshalLimits(t *testing.T) {
	hs, err := parseBlock(t, `a2a {
		card {
			name x
		}
		limits monitor {
			allow_methods GetTask ListTasks
			rate 10/s burst 20
			max_turns 2
		}
		limits * {
			rate 120/m
		}
	}`)
	if err != nil {
		t.Fatal(err)
	}
	m := hs.agent.Limits["monitor"]
	if m == nil || len(m.AllowMethods) != 2 || m.Rate != 10 || m.Burst != 20 || m.MaxTurns != 2 {
		t.Fatalf("monitor = %+v", m)
	}
	if any := hs.agent.Limits["*"]; any == nil || any.Rate != 2 || any.Burst != 0 {
		t.Fatalf("* = %+v", any)
	}
	if err := hs.agent.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, c := range []struct{ body, want string }{
		{"limits a {\nallow_methods tasks/get\n}", "not an A2A 1.0 method"},
		{"limits a {\nrate 10\n}", "want <N>/s"},
		{"limits a {\nrate 10/d\n}", "unit must be s, m or h"},
		{"limits a {\nrate 0/s\n}", "positive number"},
		{"limits a {\nrate 1/s burst x\n}", "burst must be a positive integer"},
		{"limits a {\nmax_turns 0\n}", "at least 1"},
		{"limits a {\nbogus 1\n}", "unknown option"},
		{"limits a {\nrate 1/s\nrate 2/s\n}", "duplicate"},
		{"limits a\nlimits a", "duplicate block"},
		{"limits", "wrong argument count"},
	} {
		_, err := parseBlock(t, "a2a {\ncard {\nname x\n}\n"+c.body+"\n}")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.body, err, c.want)
		}
	}
}
