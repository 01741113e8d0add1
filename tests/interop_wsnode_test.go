package tests

// Interop of the WebSocket binding (XPORT-3) with the `ws` npm package
// (pinned in tests/interop/js/package.json): runs
// tests/interop/js/ws_client.mjs against the built gateway. The official
// JS SDK has no WebSocket transport, so this is a plain Node client of
// the documented frame format.

import (
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

func TestInteropWebSocketNode(t *testing.T) {
	t.Parallel()
	node, dir := interopNodeSDK(t)
	gw := harness.StartGateway(t, wsSite)

	var sum struct {
		OK       bool                      `json:"ok"`
		Steps    map[string]map[string]any `json:"steps"`
		Failures []string                  `json:"failures"`
	}
	stdout, runErr := interopRunNode(t, 2*time.Minute, node, dir, &sum, "ws_client.mjs", gw.URL, "ws-token")
	for _, f := range sum.Failures {
		t.Errorf("ws client: %s", f)
	}
	if runErr != nil || !sum.OK {
		t.Fatalf("ws_client.mjs: %v ok=%v\n%s", runErr, sum.OK, stdout)
	}
	want := func(step, key string, v any) {
		t.Helper()
		if got := sum.Steps[step][key]; got != v {
			t.Errorf("%s.%s = %v, want %v", step, key, got, v)
		}
	}
	want("card", "url", wsURL(gw.URL, "/ws"))
	want("sendMessage", "frames", float64(1))
	want("sendMessage", "final", true)
	want("sendMessage", "state", "TASK_STATE_INPUT_REQUIRED")
	want("streams", "lastEventA", "statusUpdate(TASK_STATE_INPUT_REQUIRED)")
	want("streams", "lastEventB", "statusUpdate(TASK_STATE_INPUT_REQUIRED)")
	want("streams", "endsWithBareFinal", true)
	want("streams", "interleaved", true)
	want("getTask", "id", sum.Steps["sendMessage"]["taskId"])
	want("getTask", "frameId", float64(7))
	want("parseError", "code", float64(-32700))
}
