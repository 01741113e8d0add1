package tests

// End-to-end: the A2A metrics of a site with several agents (TURN-10)
// carry an agent label (OPS-2): the agent block's name, "default" for the
// site root, never a value taken from a request.

import (
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestOpsMetricsByAgent(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name ops-root
	}
	agent planner {
		card {
			name "Planner: free text, not a label"
		}
		backend echo {
			chunks 4
			delay 300ms
		}
	}
	agent shell {
		card {
			name shell
		}
	}
}`, harness.Options{Admin: true})

	before := metScrape(t, gw)
	for _, name := range []string{"caddy_a2a_active_turns", "caddy_a2a_open_streams"} {
		for _, a := range []string{"planner", "shell", "default"} {
			if v, found := metValue(before, name, map[string]string{"agent": a}); !found || v != 0 {
				t.Errorf("before the workload: %s{agent=%s} = %v (found %v), want 0", name, a, v, found)
			}
		}
	}

	for path, n := range map[string]int{"/shell/": 2, "/": 1} {
		for range n {
			if _, rerr := harness.At(gw.URL+path).RPC(t, "SendMessage", map[string]any{"message": bkMessage("hi", "", nil)}); rerr != nil {
				t.Fatalf("SendMessage on %s: %v", path, rerr)
			}
		}
	}
	if _, rerr := harness.At(gw.URL+"/shell/").RPC(t, "GetTask", map[string]any{"id": "no-such-task"}); rerr == nil {
		t.Fatal("GetTask of an unknown task succeeded")
	}

	// A planner stream: its stream and turn are planner's alone.
	stream := harness.At(gw.URL+"/planner/").Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("plan", "", nil)})
	metWaitWorking(t, stream)
	during := metScrape(t, gw)
	for _, tc := range []struct {
		name, agent string
		want        float64
	}{
		{"caddy_a2a_open_streams", "planner", 1},
		{"caddy_a2a_active_turns", "planner", 1},
		{"caddy_a2a_open_streams", "shell", 0},
		{"caddy_a2a_active_turns", "shell", 0},
		{"caddy_a2a_active_turns", "default", 0},
	} {
		if v, _ := metValue(during, tc.name, map[string]string{"agent": tc.agent}); v != tc.want {
			t.Errorf("during the planner stream: %s{agent=%s} = %v, want %v", tc.name, tc.agent, v, tc.want)
		}
	}
	stream.Rest(15 * time.Second)
	after := metWait(t, gw, "caddy_a2a_open_streams", map[string]string{"agent": "planner"}, "planner stream closed", func(v float64) bool { return v == 0 })
	after = metWait(t, gw, "caddy_a2a_turn_duration_seconds_count", map[string]string{"agent": "planner"}, "planner turn observed", func(v float64) bool { return v == 1 })

	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"caddy_a2a_requests_total", map[string]string{"agent": "planner", "binding": "jsonrpc", "method": "SendStreamingMessage", "outcome": "ok"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"agent": "planner", "method": "SendMessage"}, 0},
		{"caddy_a2a_requests_total", map[string]string{"agent": "shell", "binding": "jsonrpc", "method": "SendMessage", "outcome": "ok"}, 2},
		{"caddy_a2a_requests_total", map[string]string{"agent": "shell", "method": "GetTask", "outcome": "TASK_NOT_FOUND"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"agent": "default", "binding": "jsonrpc", "method": "SendMessage", "outcome": "ok"}, 1},
		{"caddy_a2a_task_transitions_total", map[string]string{"agent": "planner", "state": "submitted"}, 1},
		{"caddy_a2a_task_transitions_total", map[string]string{"agent": "shell", "state": "submitted"}, 2},
		{"caddy_a2a_task_transitions_total", map[string]string{"agent": "default", "state": "submitted"}, 1},
		{"caddy_a2a_turn_duration_seconds_count", map[string]string{"agent": "shell", "backend": "echo"}, 2},
		{"caddy_a2a_turn_duration_seconds_count", map[string]string{"agent": "default", "backend": "echo"}, 1},
		{"caddy_a2a_active_turns", map[string]string{"agent": "planner"}, 0},
	} {
		if v, _ := metValue(after, tc.name, tc.labels); v != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.labels, v, tc.want)
		}
	}
	// The agent label holds only config names, never the card's free-text name.
	for _, l := range strings.Split(metGrep(after, "caddy_a2a_"), "\n") {
		if strings.Contains(l, "Planner") || strings.Contains(l, "ops-root") {
			t.Errorf("a card name in a label: %q", l)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", metGrep(after, "caddy_a2a_"))
	}
}
