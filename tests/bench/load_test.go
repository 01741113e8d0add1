package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTaskIDsCheck (issue 29, issue 33.5): a scenario whose answers repeat
// a task id measured dedupe hits and is invalid; one named as a dedupe
// scenario must name a single task; scenarios naming no task pass.
func TestTaskIDsCheck(t *testing.T) {
	for _, tc := range []struct {
		name string
		ids  []string
		want string // substring of the verdict; "" = valid
	}{
		{"SendMessage", []string{"a", "b", "c"}, ""},
		{"SendMessage", []string{"a", "b", "a"}, "measured dedupe hits"},
		{"SendMessage", []string{"a", "", "c"}, "named no task"},
		{"card GET", []string{"", "", ""}, ""},
		{dedupeHitsPrefix + "x", []string{"a", "a", "a"}, ""},
		{dedupeHitsPrefix + "x", []string{"a", "b", "a"}, "turns ran"},
	} {
		ids := newTaskIDs()
		half := newTaskIDs()
		for i, id := range tc.ids {
			if i%2 == 0 {
				ids.add(id)
			} else {
				half.add(id)
			}
		}
		ids.merge(half)
		got := ids.check(tc.name, len(tc.ids))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s %v: check = %q, want %q", tc.name, tc.ids, got, tc.want)
		}
	}
}

// TestTaskIDOf reads the task id of a JSON-RPC answer and of a stream
// event.
func TestTaskIDOf(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"result":{"task":{"id":"t-1","contextId":"c"}}}`:                "t-1",
		`data: {"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t-2","final":true}}}`: "t-2",
		`{"result":{"task":{"contextId":"c","id":"t-3"}}}`:                                       "t-3",
		`{"result":{"message":{"messageId":"m"}}}`:                                               "",
	} {
		if got := taskIDOf([]byte(in)); got != want {
			t.Errorf("taskIDOf(%s) = %q, want %q", in, got, want)
		}
	}
}

// The harness replaces only the generated part of docs/benchmarks.md and
// keeps the analysis after it.
func TestSpliceReport(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.md")
	if got := spliceReport(path, "# T\n"); !strings.HasPrefix(got, beginMarker) || !strings.Contains(got, "# T\n"+endMarker) {
		t.Fatalf("new file: %q", got)
	}
	old := "intro\n" + beginMarker + " x -->\n# old\n" + endMarker + "\n\n## analysis\nkept\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got := spliceReport(path, "# new\n")
	if !strings.HasPrefix(got, "intro\n"+beginMarker) || strings.Contains(got, "# old") || !strings.Contains(got, "# new\n"+endMarker+"\n\n## analysis\nkept\n") {
		t.Fatalf("splice: %q", got)
	}
}
