package tests

// End-to-end operations tests: the A2A metrics on the
// admin endpoint's /metrics after a scripted workload (OPS-2), the turn log
// line, and credentials kept out of Caddy's access log (OPS-1).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// metScrape fetches the admin /metrics text.
func metScrape(t *testing.T, gw *harness.Gateway) string {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(gw.AdminURL + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

// metValue sums the samples of name whose labels include want (exposition
// text format; our label values hold no commas or quotes). found is false
// when no sample matched.
func metValue(text, name string, want map[string]string) (sum float64, found bool) {
	for _, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		series, val, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		metric, labels, _ := strings.Cut(series, "{")
		if metric != name {
			continue
		}
		got := map[string]string{}
		for _, kv := range strings.Split(strings.TrimSuffix(labels, "}"), ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				got[k] = strings.Trim(v, `"`)
			}
		}
		match := true
		for k, v := range want {
			if got[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		f, err := strconv.ParseFloat(strings.Fields(val)[0], 64)
		if err != nil {
			continue
		}
		sum += f
		found = true
	}
	return sum, found
}

// metWait polls /metrics until cond holds for the value of name{want}.
func metWait(t *testing.T, gw *harness.Gateway, name string, want map[string]string, what string, cond func(float64) bool) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		text := metScrape(t, gw)
		if v, _ := metValue(text, name, want); cond(v) {
			return text
		}
		if time.Now().After(deadline) {
			v, found := metValue(text, name, want)
			t.Fatalf("%s: %s%v = %v (found %v)\n%s", what, name, want, v, found, metGrep(text, "caddy_a2a_"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func metGrep(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// metWaitWorking reads a stream until the task is WORKING and returns its id.
func metWaitWorking(t *testing.T, stream *harness.Stream) string {
	t.Helper()
	var taskID string
	stream.Until(20*time.Second, "the agent worked", func(ev map[string]any) bool {
		if id := bkStr(ev, "task", "id"); id != "" {
			taskID = id
		}
		return bkState(ev) == "TASK_STATE_WORKING" && taskID != ""
	})
	return taskID
}

func TestOpsMetrics(t *testing.T) {
	t.Parallel()
	recv := newPushReceiver(t)
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name ops-metrics
	}
	backend echo {
		chunks 4
		delay 300ms
	}
	push {
		allow_private_networks 127.0.0.0/8
	}
}`, harness.Options{Admin: true})

	before := metScrape(t, gw)
	for _, name := range []string{"caddy_a2a_active_turns", "caddy_a2a_open_streams"} {
		if v, found := metValue(before, name, nil); !found || v != 0 {
			t.Errorf("before the workload: %s = %v (found %v), want 0", name, v, found)
		}
	}

	// Two blocking sends, one with a push config. The first names its
	// own context id, which the gateway looks up (get_context); a context
	// id the gateway mints is never read back.
	res, rerr := harness.At(gw.URL).RPC(t, "SendMessage", map[string]any{"message": bkMessage("one", "ctx-ops-metrics", nil)})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	taskID := bkStr(res, "task", "id")
	pushSend(t, gw.URL, map[string]any{"url": recv.srv.URL + "/ok"})

	// Errors: an unknown task, an unknown method, a body that is not JSON.
	if _, rerr := harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"id": "no-such-task"}); rerr == nil {
		t.Fatal("GetTask of an unknown task succeeded")
	}
	if _, rerr := harness.At(gw.URL).RPC(t, "tasks/get", map[string]any{"id": taskID}); rerr == nil {
		t.Fatal("an unknown method succeeded")
	}
	harness.At(gw.URL).Do(t, http.MethodPost, `{"jsonrpc":`).JSON(t)
	if resp, _ := do(t, "GET", gw.URL+"/tasks/no-such-task", map[string]string{"A2A-Version": "1.0"}); resp.StatusCode != http.StatusNotFound {
		t.Fatalf("REST GET unknown task: HTTP %d", resp.StatusCode)
	}

	// A stream, seen open with its turn running; then canceled.
	stream := harness.At(gw.URL).Stream(t, "SendStreamingMessage", map[string]any{"message": bkMessage("stream me", "", nil)})
	streamTask := metWaitWorking(t, stream)
	during := metScrape(t, gw)
	if v, _ := metValue(during, "caddy_a2a_open_streams", nil); v != 1 {
		t.Errorf("open streams during the stream = %v, want 1", v)
	}
	if v, _ := metValue(during, "caddy_a2a_active_turns", nil); v != 1 {
		t.Errorf("active turns during the stream = %v, want 1", v)
	}
	if _, rerr := harness.At(gw.URL).RPC(t, "CancelTask", map[string]any{"id": streamTask}); rerr != nil {
		t.Fatalf("CancelTask: %v", rerr)
	}
	stream.Rest(15 * time.Second)

	// Push: the delivery is counted once it reached the receiver.
	recv.waitHits(t, "/ok", 1, 10*time.Second)
	metWait(t, gw, "caddy_a2a_push_delivered_total", map[string]string{"queue": "local-file"}, "push delivered", func(v float64) bool { return v >= 1 })
	after := metWait(t, gw, "caddy_a2a_open_streams", nil, "stream closed", func(v float64) bool { return v == 0 })
	after = metWait(t, gw, "caddy_a2a_turn_duration_seconds_count", map[string]string{"backend": "echo", "outcome": "canceled"}, "canceled turn observed", func(v float64) bool { return v == 1 })

	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "SendMessage", "outcome": "ok"}, 2},
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "SendStreamingMessage", "outcome": "ok"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "CancelTask", "outcome": "ok"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "GetTask", "outcome": "TASK_NOT_FOUND"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "unknown", "outcome": "METHOD_NOT_FOUND"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"binding": "jsonrpc", "method": "unknown", "outcome": "PARSE_ERROR"}, 1},
		{"caddy_a2a_requests_total", map[string]string{"binding": "rest", "method": "GetTask", "outcome": "TASK_NOT_FOUND"}, 1},
		{"caddy_a2a_turn_duration_seconds_count", map[string]string{"backend": "echo", "outcome": "input_required"}, 2},
		{"caddy_a2a_turn_duration_seconds_count", map[string]string{"backend": "echo", "outcome": "canceled"}, 1},
		{"caddy_a2a_task_transitions_total", map[string]string{"state": "submitted"}, 3},
		{"caddy_a2a_task_transitions_total", map[string]string{"state": "working"}, 3},
		{"caddy_a2a_task_transitions_total", map[string]string{"state": "input_required"}, 2},
		{"caddy_a2a_task_transitions_total", map[string]string{"state": "canceled"}, 1},
		{"caddy_a2a_push_queued_total", map[string]string{"queue": "local-file"}, 1},
		{"caddy_a2a_push_delivered_total", map[string]string{"queue": "local-file"}, 1},
		{"caddy_a2a_push_dead_total", map[string]string{"queue": "local-file"}, 0},
		{"caddy_a2a_push_queue_depth", map[string]string{"queue": "local-file"}, 0},
		{"caddy_a2a_active_turns", nil, 0},
		{"caddy_a2a_open_streams", nil, 0},
	} {
		v, found := metValue(after, tc.name, tc.labels)
		if !found || v != tc.want {
			t.Errorf("%s%v = %v (found %v), want %v", tc.name, tc.labels, v, found, tc.want)
		}
	}
	for _, op := range []string{"put_task", "get_task", "get_context"} {
		if v, _ := metValue(after, "caddy_a2a_store_operation_duration_seconds_count", map[string]string{"op": op}); v == 0 {
			t.Errorf("store op %s: no observation", op)
		}
	}
	// Bounded labels: no task id or callback URL in any series.
	for _, l := range strings.Split(metGrep(after, "caddy_a2a_"), "\n") {
		if strings.Contains(l, taskID) || strings.Contains(l, streamTask) || strings.Contains(l, "127.0.0.1") {
			t.Errorf("unbounded label in %q", l)
		}
	}
	if t.Failed() {
		t.Logf("metrics:\n%s", metGrep(after, "caddy_a2a_"))
	}
}

// TestOpsTurnLogLine: a quick routine turn's "turn" line, at debug level
// (docs/operations.md, Logs), with its fields and without the prompt or
// the token.
func TestOpsTurnLogLine(t *testing.T) {
	t.Parallel()
	gw := harness.StartGatewayWith(t, `a2a {
	card {
		name ops-log
	}
	auth {
		bearer tok-ops-log
	}
}`, harness.Options{Global: "log {\n\tlevel DEBUG\n}"})
	res, rerr := harness.At(gw.URL, harness.Bearer("tok-ops-log")).RPC(t, "SendMessage", map[string]any{"message": bkMessage("a very secret prompt", "", nil)})
	if rerr != nil {
		t.Fatalf("SendMessage: %v", rerr)
	}
	taskID := bkStr(res, "task", "id")
	var line map[string]any
	deadline := time.Now().Add(10 * time.Second)
	for line == nil && time.Now().Before(deadline) {
		for _, l := range strings.Split(gw.Output(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "turn" && m["task_id"] == taskID {
				line = m
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if line == nil {
		t.Fatalf("no turn line for %s in:\n%s", taskID, gw.Output())
	}
	for k, want := range map[string]any{"principal": "default", "backend": "echo", "outcome": "TASK_STATE_INPUT_REQUIRED", "level": "debug"} {
		if line[k] != want {
			t.Errorf("turn line %s = %v, want %v: %v", k, line[k], want, line)
		}
	}
	for _, k := range []string{"context_id", "duration", "correlation_id"} {
		if _, ok := line[k]; !ok {
			t.Errorf("turn line has no %s: %v", k, line)
		}
	}
	if out := gw.Output(); strings.Contains(out, "very secret prompt") || strings.Contains(out, "tok-ops-log") {
		t.Errorf("the log holds the prompt or the token:\n%s", out)
	}
}

// TestOpsAccessLogRedactsCredentials checks the documented access log
// configuration: Caddy (v2.11) clones each request, headers included, for
// its access log before any handler runs, so a handler cannot hide a header
// there; Caddy itself redacts Authorization, and the filter encoder of the
// docs/operations.md redacts the API key header. The a2a_auth handler also removes the
// API key from the request it passes on, so later handlers and placeholders
// never see it.
func TestOpsAccessLogRedactsCredentials(t *testing.T) {
	t.Parallel()
	const key, token = "k-ops-SECRET-4242", "t-ops-SECRET-4343"
	gw := harness.StartGateway(t, `log {
	format filter {
		request>headers>X-Api-Key replace REDACTED
	}
}
route {
	a2a {
		card {
			name ops-access-log
		}
		auth {
			api_key `+key+`
			principal ci bearer `+token+`
		}
	}
	respond "seen key=[{http.request.header.X-API-Key}]" 200
}`)
	send := func(path string, hdr map[string]string) (int, string) {
		r := harness.At(gw.URL+path).Call(t, "SendMessage", map[string]any{"message": bkMessage("hi", "", nil)}, harness.Headers(hdr))
		return r.StatusCode, string(r.Raw)
	}
	for _, tc := range []struct {
		path string
		hdr  map[string]string
		want int
	}{
		{"/", map[string]string{"X-API-Key": key}, http.StatusOK},
		{"/", map[string]string{"X-Api-Key": key + "-wrong"}, http.StatusUnauthorized},
		{"/", map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		{"/not-a2a", map[string]string{"X-API-Key": key}, http.StatusOK},
	} {
		code, body := send(tc.path, tc.hdr)
		if code != tc.want {
			t.Fatalf("POST %s with %v: HTTP %d, want %d: %s", tc.path, tc.hdr, code, tc.want, body)
		}
		// The next handler (here respond) no longer sees the key.
		if tc.path == "/not-a2a" && body != "seen key=[]" {
			t.Errorf("the handler after a2a_auth saw the API key: %q", body)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	n := 0
	for time.Now().Before(deadline) {
		if n = strings.Count(gw.Output(), `"msg":"handled request"`); n >= 4 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	out := gw.Output()
	if n < 4 {
		t.Fatalf("want 4 access log lines, got %d:\n%s", n, out)
	}
	for _, secret := range []string{key, token} {
		if strings.Contains(out, secret) {
			t.Errorf("the log holds %q:\n%s", secret, out)
		}
	}
	for _, want := range []string{`"X-Api-Key":"REDACTED"`, `"Authorization":["REDACTED"]`, fmt.Sprintf(`"status":%d`, http.StatusUnauthorized)} {
		if !strings.Contains(out, want) {
			t.Errorf("the access log has no %s:\n%s", want, out)
		}
	}
}
