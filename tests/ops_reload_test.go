package tests

// OPS-3, reloads: a configuration reload through the admin endpoint keeps
// running turns, their open streams and the push workers (one worker set,
// no duplicates), serves the new configuration at once, and leaks no
// goroutines.

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddy-a2a/caddy-a2a/tests/internal/harness"
)

// opsSite is a site whose card description and echo backend vary; push is
// on (local-file queue, 4 workers) with loopback callbacks allowed.
func opsSite(description, backend string) string {
	return `a2a {
	card {
		name ops-agent
		description "` + description + `"
		max_age 0s
	}
	` + backend + `
	push {
		queue local-file
		allow_private_networks 127.0.0.0/8
		workers 4
		retry_initial 100ms
		retry_max 300ms
	}
}`
}

const opsStreamingEcho = "backend echo {\n\t\tchunks 20\n\t\tdelay 100ms\n\t}"

// opsClient makes no keep-alive connections, so that idle connections do
// not show up in the gateway's goroutine counts.
var opsClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// opsGoroutines returns the gateway's goroutine dump (debug=2: one block
// per goroutine) from the admin endpoint's pprof.
func opsGoroutines(t *testing.T, gw *harness.Gateway) string {
	t.Helper()
	resp, err := opsClient.Get(gw.AdminURL + "/debug/pprof/goroutine?debug=2")
	if err != nil {
		t.Fatalf("goroutine dump: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("goroutine dump: HTTP %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

// opsGoroutineTotal returns the total from the debug=1 goroutine profile.
func opsGoroutineTotal(t *testing.T, gw *harness.Gateway) int {
	t.Helper()
	resp, err := opsClient.Get(gw.AdminURL + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		t.Fatalf("goroutine profile: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := regexp.MustCompile(`goroutine profile: total (\d+)`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("goroutine profile: no total in %.200s", b)
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}

// opsCountStacks counts the goroutines of a debug=2 dump whose stack
// contains substr.
func opsCountStacks(dump, substr string) int {
	n := 0
	for _, g := range strings.Split(dump, "\n\n") {
		if strings.Contains(g, substr) {
			n++
		}
	}
	return n
}

// opsPushWorkers returns how many push engines run (goroutines created by
// Engine.Start: one per engine) and how many goroutines belong to engines
// (the loop, the queue's Run and the delivery workers).
func opsPushWorkers(t *testing.T, gw *harness.Gateway) (engines, goroutines int) {
	dump := opsGoroutines(t, gw)
	return opsCountStacks(dump, "created by github.com/caddy-a2a/caddy-a2a/push.(*Engine).Start"),
		opsCountStacks(dump, "github.com/caddy-a2a/caddy-a2a/push.(*Engine).run")
}

// opsCard returns the served card's description.
func opsCard(t *testing.T, url string) string {
	t.Helper()
	resp, err := opsClient.Get(url + "/.well-known/agent-card.json")
	if err != nil {
		t.Fatalf("card: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("card: HTTP %d: %s", resp.StatusCode, b)
	}
	m := regexp.MustCompile(`"description":"([^"]*)"`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("card without a description: %s", b)
	}
	return string(m[1])
}

// opsStreamText returns the concatenated agent text chunks of WORKING
// updates and how many there were.
func opsStreamText(events []map[string]any) (string, int) {
	var b strings.Builder
	n := 0
	for _, ev := range events {
		if bkStr(ev, "statusUpdate", "status", "state") != "TASK_STATE_WORKING" || bkGet(ev, "statusUpdate", "metadata", "iac_code", "assistantFinal") != nil {
			continue
		}
		if s := bkStr(ev, "statusUpdate", "status", "message", "parts", 0, "text"); s != "" {
			b.WriteString(s)
			n++
		}
	}
	return b.String(), n
}

// A reload in the middle of a streaming turn: the stream stays open past
// the old server's grace period and gets every event through the final
// INPUT_REQUIRED; the task reads back afterwards; the new card is served;
// the push delivery of the task (configured before the reload, due after
// it) and of a new task arrive exactly once; one push worker set runs.
func TestOpsReloadDuringStreamingTurn(t *testing.T) {
	t.Parallel()
	recv := newPushReceiver(t)
	gw := harness.StartGatewayWith(t, opsSite("before the reload", opsStreamingEcho), harness.Options{Admin: true})
	if d := opsCard(t, gw.URL); d != "before the reload" {
		t.Fatalf("card description %q before the reload", d)
	}
	// The a2a app may still be starting its workers when the site answers.
	enginesBefore, workersBefore := opsPushWorkers(t, gw)
	for deadline := time.Now().Add(10 * time.Second); (enginesBefore != 1 || workersBefore < 4) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		enginesBefore, workersBefore = opsPushWorkers(t, gw)
	}
	if enginesBefore != 1 || workersBefore < 4 {
		t.Fatalf("before the reload: %d push engines, %d engine goroutines; want 1 engine with at least 4 workers", enginesBefore, workersBefore)
	}

	// "Echo: " + 34 characters = 40, cut into 20 chunks of 2.
	prompt := "reload me while streaming, please!"
	answer := "Echo: " + prompt
	if len([]rune(answer)) != 40 {
		t.Fatalf("prompt length %d", len(prompt))
	}
	msg := bkMessage(prompt, "", nil)
	body := map[string]any{"message": msg, "configuration": map[string]any{
		"taskPushNotificationConfig": map[string]any{"url": recv.srv.URL + "/streamed", "token": "tok-s"}}}
	stream := harness.At(gw.URL).Stream(t, "SendStreamingMessage", body)

	// Read a few chunks, then reload with a new card description.
	var events []map[string]any
	for len(events) < 5 {
		ev, ok := stream.Next(10 * time.Second)
		if !ok {
			t.Fatalf("stream ended before the reload after %d events", len(events))
		}
		events = append(events, ev)
	}
	taskID := bkStr(events[0], "task", "id")
	if taskID == "" {
		t.Fatalf("first event is not the task: %v", events[0])
	}
	reloaded := time.Now()
	gw.Reload(opsSite("after the reload", opsStreamingEcho))
	if d := opsCard(t, gw.URL); d != "after the reload" {
		t.Errorf("card description %q right after the reload, want the new one", d)
	}

	events = append(events, stream.Rest(30*time.Second)...)
	ended := time.Since(reloaded)
	state, final := bkFinalText(events)
	if state != "TASK_STATE_INPUT_REQUIRED" || final != answer {
		t.Fatalf("stream ended %s %q, want INPUT_REQUIRED %q (%d events)", state, final, answer, len(events))
	}
	if ended < time.Second {
		t.Errorf("the turn ended %v after the reload: the stream did not outlast the old server's 1s grace period, the test proves less than it should", ended)
	}
	text, chunks := opsStreamText(events)
	if text != answer || chunks != 20 {
		t.Errorf("streamed %d chunks %q, want all 20 chunks of %q", chunks, text, answer)
	}
	var toolStarted, toolCompleted, usage, assistantFinal bool
	for _, ev := range events {
		switch {
		case bkStr(ev, "statusUpdate", "metadata", "iac_code", "tool", "status") == "started":
			toolStarted = true
		case bkStr(ev, "statusUpdate", "metadata", "iac_code", "tool", "status") == "completed":
			toolCompleted = true
		case bkGet(ev, "statusUpdate", "metadata", "iac_code", "usage") != nil:
			usage = true
		case bkGet(ev, "statusUpdate", "metadata", "iac_code", "assistantFinal") != nil:
			assistantFinal = true
		case ev["error"] != nil:
			t.Errorf("error on the stream: %v", ev["error"])
		}
	}
	if !toolStarted || !toolCompleted || !usage || !assistantFinal {
		t.Errorf("events missing from the stream: tool started %v, tool completed %v, usage %v, assistant final %v", toolStarted, toolCompleted, usage, assistantFinal)
	}

	res, rpcErr := harness.At(gw.URL).RPC(t, "GetTask", map[string]any{"id": taskID}, harness.Client(opsClient))
	if rpcErr != nil || bkStr(res, "status", "state") != "TASK_STATE_INPUT_REQUIRED" || bkStr(res, "status", "message", "parts", 0, "text") != answer {
		t.Fatalf("GetTask after the reload: %v %v", res, rpcErr)
	}

	// The push delivery of the streamed task comes from the one worker set.
	hits := recv.waitHits(t, "/streamed", 1, 10*time.Second)
	if su, _ := hits[0].Body["statusUpdate"].(map[string]any); su == nil || su["taskId"] != taskID || bkStr(su, "status", "state") != "TASK_STATE_INPUT_REQUIRED" {
		t.Errorf("push body of the streamed task: %v", hits[0].Body)
	}
	// A new task after the reload: its delivery arrives too.
	task := pushSend(t, gw.URL, map[string]any{"url": recv.srv.URL + "/after"}, harness.Client(opsClient))
	recv.waitHits(t, "/after", 1, 10*time.Second)
	time.Sleep(700 * time.Millisecond) // sleep: room for a duplicate push, which must not come
	if n := len(recv.hits("/streamed")); n != 1 {
		t.Errorf("the streamed task's push was delivered %d times, want once", n)
	}
	if hs := recv.hits("/after"); len(hs) != 1 || bkStr(hs[0].Body, "statusUpdate", "taskId") != task["id"] {
		t.Errorf("the new task's push: %d deliveries, want 1 for %v", len(hs), task["id"])
	}
	engines, workers := opsPushWorkers(t, gw)
	if engines != 1 || workers != workersBefore {
		t.Errorf("after the reload: %d push engines with %d goroutines, want 1 with %d (as before)", engines, workers, workersBefore)
	}
}

// Several reloads leave the goroutine count flat: no worker set, janitor,
// server or stream goroutine is left behind by an old configuration.
func TestOpsReloadNoGoroutineLeak(t *testing.T) {
	t.Parallel()
	recv := newPushReceiver(t)
	gw := harness.StartGatewayWith(t, opsSite("generation 0", "backend echo"), harness.Options{Admin: true, GracePeriod: 200 * time.Millisecond})
	work := func(i int) {
		// One turn with a push delivery and one card fetch per generation.
		pushSend(t, gw.URL, map[string]any{"url": fmt.Sprintf("%s/gen%d", recv.srv.URL, i)}, harness.Client(opsClient))
		recv.waitHits(t, fmt.Sprintf("/gen%d", i), 1, 10*time.Second)
		if d := opsCard(t, gw.URL); d != fmt.Sprintf("generation %d", i) {
			t.Fatalf("card description %q, want generation %d", d, i)
		}
	}
	work(0)
	gw.Reload(opsSite("generation 1", "backend echo"))
	work(1)
	before := opsSettledGoroutines(t, gw, 0)

	const reloads = 8
	for i := 2; i < 2+reloads; i++ {
		gw.Reload(opsSite(fmt.Sprintf("generation %d", i), "backend echo"))
		work(i)
	}
	// Goroutines of the old servers end shortly after their grace period.
	after := opsSettledGoroutines(t, gw, before+5)
	t.Logf("goroutines: %d before %d reloads, %d after", before, reloads, after)
	if after > before+5 {
		t.Errorf("goroutines: %d before %d reloads, %d after; want about the same\n%s", before, reloads, after, opsGoroutines(t, gw))
	}
	if engines, _ := opsPushWorkers(t, gw); engines != 1 {
		t.Errorf("%d push engines after %d reloads, want 1", engines, reloads)
	}
}

// opsSettledGoroutines waits up to 5s for the goroutine count to reach at
// most target (0: for it to stop changing) and returns the last count.
func opsSettledGoroutines(t *testing.T, gw *harness.Gateway, target int) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	last := opsGoroutineTotal(t, gw)
	for time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		n := opsGoroutineTotal(t, gw)
		if (target > 0 && n <= target) || (target == 0 && n == last) {
			return n
		}
		last = n
	}
	return last
}
